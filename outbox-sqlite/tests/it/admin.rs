//! The operator operations against real SQLite files.

use crate::support::admin_subject;

outbox_testkit::admin_suite!(admin_subject);
