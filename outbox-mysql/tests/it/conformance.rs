//! The conformance, per-key order, slice and operator suites against the real server.

use crate::common::{admin_subject, subject};

outbox_testkit::conformance_suite!(subject);
outbox_testkit::ordered_suite!(subject);
outbox_testkit::slice_suite!(subject);
outbox_testkit::admin_suite!(admin_subject);
outbox_testkit::ordered_admin_suite!(admin_subject);
