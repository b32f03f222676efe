#![no_main]
//! The `sqlite_row` target of outbox-fuzz under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outbox_fuzz::rows::sqlite_row(data));
