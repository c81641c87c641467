//! Compiles the device crate for every gfx this program may meet; `iron::include_kernels!()`
//! embeds the bundle. Cargo reruns this only when a source file of the kernels changes.

fn main() -> Result<(), iron_build::Error> {
    iron_build::Kernels::new("../kernels")
        .gfx(["gfx950", "gfx1100"])
        .build()?;
    Ok(())
}
