//! Kernels embedded in the host binary: the bundle a build script made with `iron-build`.

/// The offload bundle that this crate's build script built with
/// `iron_build::Kernels::new(..).build()`, as a `&'static [u8]` aligned for the ELF reader,
/// ready for [`Device::load_module`](crate::Device::load_module).
///
/// `include_kernels!()` takes the last device crate the build script built (the build sets
/// `IRON_KERNELS`); `include_kernels!("my-kernels")` names one by its package, for a build script
/// that builds several.
///
/// ```ignore
/// // build.rs: iron_build::Kernels::new("../kernels").gfx(["gfx950", "gfx1100"]).build()?;
/// static KERNELS: &[u8] = iron::include_kernels!();
///
/// fn load(device: &iron::Device) -> Result<iron::Module, iron::DeviceError> {
///     device.load_module(KERNELS)
/// }
/// ```
#[macro_export]
macro_rules! include_kernels {
    () => {
        $crate::include_kernels!(@bytes env!(
            "IRON_KERNELS",
            "no kernels were built for this crate: call \
             iron_build::Kernels::new(\"<device crate dir>\").gfx([..]).build() in its build.rs"
        ))
    };
    ($package:literal) => {
        $crate::include_kernels!(@bytes concat!(
            env!("OUT_DIR"),
            "/iron/",
            $package,
            "/kernels.bundle"
        ))
    };
    (@bytes $path:expr) => {{
        #[repr(C, align(16))]
        struct Aligned<T: ?Sized>(T);
        static ALIGNED: &Aligned<[u8]> = &Aligned(*include_bytes!($path));
        &ALIGNED.0
    }};
}
