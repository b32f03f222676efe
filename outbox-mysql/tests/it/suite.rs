//! Every case of the testkit that applies to the MariaDB / MySQL store, against the real
//! server: the one suite invocation of this binary. Every MariaDB table takes claims in
//! key order, so the operator cases of per-key order run on the plain admin factory.

outbox_testkit::store_suite! {
    store: crate::common::subject,
    admin: crate::common::admin_subject,
    ordered_admin: crate::common::admin_subject,
    drain: crate::drain::drain_subject,
    upgrades: crate::upgrades::harness(),
}
