//! Compressed (`CCOB`) bundles: the input is everything after the magic, so every run exercises
//! the header, the zlib/zstd decoders and the size limits.
#![no_main]

use iron::code_object::{Bundle, COMPRESSED_BUNDLE_MAGIC, parse_compressed_header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = COMPRESSED_BUNDLE_MAGIC.to_vec();
    input.extend_from_slice(data);
    let _ = parse_compressed_header(&input);
    let _ = Bundle::parse(&input);
});
