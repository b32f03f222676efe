//! Every case of the testkit that applies to the SQL Server store, each case in its own
//! schema: the one suite invocation of this binary (the portable path's is in
//! `portable`). The schema has what claims in key order need, so the operator cases of
//! per-key order run on the plain admin factory.

outbox_testkit::store_suite! {
    store: crate::conformance::subject,
    admin: crate::admin::admin_subject,
    ordered_admin: crate::admin::admin_subject,
    drain: crate::drain::drain_subject,
    upgrades: crate::upgrades::harness(),
}
