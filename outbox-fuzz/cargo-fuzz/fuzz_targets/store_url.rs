#![no_main]
//! The `store_url` target of outbox-fuzz under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outbox_fuzz::text::store_url(data));
