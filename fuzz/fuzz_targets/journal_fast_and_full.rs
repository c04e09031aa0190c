#![no_main]
//! See `pairling_fast::fuzzing::check_journal_fast_and_full` for the properties checked.

libfuzzer_sys::fuzz_target!(
    |data: &[u8]| pairling_fast::fuzzing::check_journal_fast_and_full(data)
);
