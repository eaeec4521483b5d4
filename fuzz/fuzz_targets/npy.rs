#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| replay::fuzzing::npy(data));
