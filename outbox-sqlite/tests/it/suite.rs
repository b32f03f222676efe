//! Every case of the testkit that applies to the SQLite store, on real files: the one
//! suite invocation of this binary (factories in support, admin, drain and upgrades).

outbox_testkit::store_suite! {
    store: crate::support::subject,
    admin: crate::support::admin_subject,
    ordered_admin: crate::admin::ordered_admin_subject,
    drain: crate::drain::drain_subject,
    upgrades: crate::upgrades::harness(),
}
