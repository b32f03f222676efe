//! The whole conformance suite against real SQLite files.

use crate::support::subject;

outbox_testkit::conformance_suite!(subject);
outbox_testkit::ordered_suite!(subject);
outbox_testkit::slice_suite!(subject);
