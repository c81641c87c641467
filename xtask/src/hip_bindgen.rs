//! `cargo xtask bindgen-hip`: regenerates `host/hip-runtime-sys/src/generated.rs` from the HIP C
//! headers with bindgen.
//!
//! The headers are Debian's `libamdhip64-dev` (HIP 5.2; `apt-get install libamdhip64-dev
//! libclang-dev`), or the `include` directory `IRON_HIP_INCLUDE_DIR` names. They must be HIP 5.x:
//! from HIP 6.0 on, `hipDeviceProp_t` is a macro for the larger R0600 layout, which the sys crate
//! defines by hand; the generated `hipDeviceProp_t` must stay the pre-6.0 layout.
//!
//! The output is the type, enum and constant declarations the listed functions need, and
//! `HipRuntimeApi`, bindgen's table of function pointers over a `libloading::Library` (every
//! listed symbol required). `hipError_t` is not generated: the sys crate's `HipError` newtype
//! (same size and ABI as the C enum) stands in for it, so that codes newer than the headers stay
//! representable. The list of required symbol names is emitted as `HIP_FUNCTIONS` so that the
//! loader can report every missing one by name.

use anyhow::{Context, Result, bail, ensure};
use std::path::{Path, PathBuf};

/// The HIP runtime functions the launcher needs; each is required of a loaded runtime. The
/// device-property queries are absent on purpose: which of them exists depends on the ROCm
/// version, so the sys crate loads them as optional symbols.
const FUNCTIONS: &[&str] = &[
    "hipInit",
    "hipDriverGetVersion",
    "hipRuntimeGetVersion",
    "hipGetDeviceCount",
    "hipSetDevice",
    "hipGetDevice",
    "hipDeviceGetAttribute",
    "hipDeviceSynchronize",
    "hipMemGetInfo",
    "hipMalloc",
    "hipFree",
    "hipMemcpy",
    "hipMemcpyAsync",
    "hipMemset",
    "hipMemsetAsync",
    "hipMemsetD8",
    "hipMemsetD32",
    "hipStreamCreate",
    "hipStreamDestroy",
    "hipStreamSynchronize",
    "hipEventCreate",
    "hipEventDestroy",
    "hipEventRecord",
    "hipEventSynchronize",
    "hipEventElapsedTime",
    "hipModuleLoadData",
    "hipModuleUnload",
    "hipModuleGetFunction",
    "hipModuleGetGlobal",
    "hipModuleLaunchKernel",
    "hipGetErrorName",
    "hipGetErrorString",
    "hipGetLastError",
];

/// Types generated although no listed function names them: the pre-6.0 device-property layout,
/// which the sys crate passes to the optional `hipGetDeviceProperties`.
const EXTRA_TYPES: &[&str] = &["hipDeviceProp_t"];

/// Name of the generated function-table struct.
const TABLE_NAME: &str = "HipRuntimeApi";

/// Where the output goes, relative to the workspace root.
const OUTPUT: &str = "host/hip-runtime-sys/src/generated.rs";

/// Regenerates the sys crate's bindings from the HIP headers.
pub fn run(workspace_root: &Path) -> Result<()> {
    crate::prerequisites::ensure(&[&crate::prerequisites::HIP_HEADERS])?;
    let include_dir = include_dir();
    let version = hip_version(&include_dir)?;
    ensure!(
        version.major == 5,
        "the headers in {} are HIP {}; bindings are generated from HIP 5.x headers (Debian's \
         libamdhip64-dev), whose hipDeviceProp_t is the pre-6.0 layout",
        include_dir.display(),
        version
    );

    let mut builder = bindgen::Builder::default()
        .header_contents("iron_hip.h", "#include <hip/hip_runtime_api.h>\n")
        .clang_args(["-x", "c", "-D__HIP_PLATFORM_AMD__"])
        .clang_arg(format!("-I{}", include_dir.display()))
        .default_enum_style(bindgen::EnumVariation::NewType {
            is_bitfield: false,
            is_global: false,
        })
        .blocklist_type("hipError_t")
        .derive_default(true)
        .layout_tests(true)
        .wrap_unsafe_ops(true)
        .dynamic_library_name(TABLE_NAME)
        .dynamic_link_require_all(true)
        .formatter(bindgen::Formatter::None)
        .raw_line(header_comment(&version))
        .raw_line("use crate::error::HipError as hipError_t;")
        .raw_line("")
        .raw_line(symbol_list());
    for function in FUNCTIONS {
        builder = builder.allowlist_function(regex_exact(function));
    }
    for ty in EXTRA_TYPES {
        builder = builder.allowlist_type(regex_exact(ty));
    }

    let bindings = builder.generate().context(
        "bindgen failed on the HIP headers (is libclang installed? apt-get install libclang-dev)",
    )?;
    let text = bindings.to_string();
    check_every_function_generated(&text)?;

    let output = workspace_root.join(OUTPUT);
    std::fs::write(&output, text).with_context(|| format!("cannot write {}", output.display()))?;
    rustfmt(&output)?;
    println!(
        "wrote {} from HIP {} headers in {}",
        output.display(),
        version,
        include_dir.display()
    );
    Ok(())
}

/// The `include` directory holding `hip/hip_runtime_api.h`.
fn include_dir() -> PathBuf {
    std::env::var_os("IRON_HIP_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/include"))
}

/// A HIP version as `hip/hip_version.h` states it.
struct HipVersion {
    major: u32,
    minor: u32,
    patch: u32,
}

impl std::fmt::Display for HipVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Reads `HIP_VERSION_MAJOR`, `_MINOR` and `_PATCH` from `hip/hip_version.h`.
fn hip_version(include_dir: &Path) -> Result<HipVersion> {
    let path = include_dir.join("hip/hip_version.h");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {} (install the headers: apt-get install libamdhip64-dev, or set \
             IRON_HIP_INCLUDE_DIR)",
            path.display()
        )
    })?;
    let define = |name: &str| -> Result<u32> {
        text.lines()
            .find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("#define") && words.next() == Some(name))
                    .then(|| words.next())
                    .flatten()
            })
            .with_context(|| format!("{} does not define {name}", path.display()))?
            .parse()
            .with_context(|| format!("{name} in {} is not a number", path.display()))
    };
    Ok(HipVersion {
        major: define("HIP_VERSION_MAJOR")?,
        minor: define("HIP_VERSION_MINOR")?,
        patch: define("HIP_VERSION_PATCH")?,
    })
}

/// The comment that opens the generated file.
fn header_comment(version: &HipVersion) -> String {
    format!(
        "// Generated from the HIP {version} C headers by `cargo xtask bindgen-hip`\n\
         // (xtask/src/hip_bindgen.rs). Do not edit: regenerate."
    )
}

/// `HIP_FUNCTIONS`: the names of the symbols `HipRuntimeApi` requires.
fn symbol_list() -> String {
    let names: Vec<String> = FUNCTIONS.iter().map(|name| format!("{name:?}")).collect();
    format!(
        "/// The symbols `{TABLE_NAME}` requires of a HIP runtime library.\n\
         pub const HIP_FUNCTIONS: &[&str] = &[{}];",
        names.join(", ")
    )
}

/// Formats `path` in place as `cargo fmt` would (raw lines included, which bindgen's own
/// formatting pass leaves alone).
fn rustfmt(path: &Path) -> Result<()> {
    let rustfmt = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let status = std::process::Command::new(&rustfmt)
        .args(["--edition", "2024"])
        .arg(path)
        .status()
        .with_context(|| format!("cannot run {}", rustfmt.to_string_lossy()))?;
    ensure!(status.success(), "rustfmt failed on {}", path.display());
    Ok(())
}

/// An allowlist pattern matching exactly `name`.
fn regex_exact(name: &str) -> String {
    format!("^{name}$")
}

/// Fails when bindgen left out a listed function (a misspelling, or headers that lack it).
fn check_every_function_generated(text: &str) -> Result<()> {
    let missing: Vec<&str> = FUNCTIONS
        .iter()
        .copied()
        .filter(|name| !text.contains(&format!("b\"{name}\\0\"")))
        .collect();
    if !missing.is_empty() {
        bail!("the HIP headers do not declare: {}", missing.join(", "));
    }
    Ok(())
}
