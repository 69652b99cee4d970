//! Fuzz target: [`lidx_fuzz::store_lsm_ops::check`] on libFuzzer's inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lidx_fuzz::store_lsm_ops::check(data));
