#![no_main]
//! The `duration` target of outbox-fuzz under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outbox_fuzz::text::duration(data));
