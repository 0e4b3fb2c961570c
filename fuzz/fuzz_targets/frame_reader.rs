//! The frame reader against a reference model (see `checks::frame_reader`).
#![no_main]

#[allow(dead_code)] // each target uses one of the checks
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::frame_reader(data));
