//! Fuzz target: [`lidx_fuzz::disk_film_format::check`] on libFuzzer's inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lidx_fuzz::disk_film_format::check(data));
