//! Message parsing and `initialize` param checking (see `checks::message`).
#![no_main]

#[allow(dead_code)] // each target uses one of the checks
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::message(data));
