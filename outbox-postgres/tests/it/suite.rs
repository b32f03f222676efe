//! Every case of the testkit that applies to the PostgreSQL store, each case in its own
//! schema: the one suite invocation of this binary for a direct connection (the pooler's
//! is in `pooler::suite`).

outbox_testkit::store_suite! {
    store: crate::conformance::subject,
    admin: crate::admin::admin_subject,
    ordered_admin: crate::admin::ordered_admin_subject,
    drain: crate::drain::drain_subject,
    upgrades: crate::upgrades::harness(),
}
