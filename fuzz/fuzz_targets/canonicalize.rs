#![no_main]
//! See `pairling_fast::fuzzing::check_canonicalize` for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pairling_fast::fuzzing::check_canonicalize(data));
