#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| replay_core::fuzzing::shard_spec(data));
