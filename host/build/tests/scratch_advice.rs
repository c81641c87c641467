//! A kernel that uses scratch fails the build with the likely cause read from its IR.

use iron_build::Kernels;
use std::path::Path;

#[test]
#[ignore = "compiles device code: run `cargo xtask test`"]
fn a_local_array_indexed_at_run_time_is_named_as_the_cause() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = here.join("../../target");
    let error = Kernels::new(here.join("tests/data/scratch-kernels"))
        .gfx(["gfx942"])
        .out_dir(target.join("iron-build-tests/scratch-kernels"))
        .target_dir(target)
        .build()
        .expect_err("a kernel with scratch and no allow_scratch fails the build");
    let text = error.to_string();
    assert!(
        text.starts_with("kernel `indexed` on gfx942 (wave64) uses "),
        "{text}"
    );
    assert!(
        text.contains(" bytes of scratch per work-item: a 64-byte local array is indexed with a run-time value"),
        "{text}"
    );
    assert!(
        text.ends_with("or declare #[kernel(..., allow_scratch)]"),
        "{text}"
    );
}
