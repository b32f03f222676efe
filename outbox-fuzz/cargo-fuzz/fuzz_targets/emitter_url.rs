#![no_main]
//! The `emitter_url` target of outbox-fuzz under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outbox_fuzz::text::emitter_url(data));
