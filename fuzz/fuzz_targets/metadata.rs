//! The metadata note decoder (msgpack) on arbitrary bytes.
#![no_main]

use iron::code_object::parse_metadata;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_metadata(data);
});
