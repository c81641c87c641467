//! Compiles the walkthrough's kernels for every gfx Iron supports; `iron::include_kernels!()`
//! embeds the bundle.

fn main() -> Result<(), iron_build::Error> {
    iron_build::Kernels::new("../kernels")
        .gfx(["all"])
        .build()?;
    Ok(())
}
