//! The offload bundle reader on arbitrary bytes; a bundle it accepts must survive writing and
//! reading back unchanged.
#![no_main]

use iron::code_object::{Bundle, TargetId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(bundle) = Bundle::parse(data) else {
        return;
    };
    let _ = bundle.select(&TargetId::new("gfx950"));
    let reread = Bundle::parse(&bundle.write()).expect("a written bundle reads back");
    assert_eq!(reread, bundle);
});
