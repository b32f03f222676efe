#![no_main]
//! The `completions` target of outbox-fuzz under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outbox_fuzz::rows::completions(data));
