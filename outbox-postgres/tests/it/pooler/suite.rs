//! Every case of the testkit that applies, through the pooler in the unnamed statement
//! mode: the store and drain cases.

outbox_testkit::store_suite! {
    store: crate::pooler::conformance::subject,
    drain: crate::pooler::drain::drain_subject,
}
