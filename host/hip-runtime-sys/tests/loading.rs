//! Loading: the failure paths with no usable library, and Debian's HIP 5.2 runtime
//! (`apt-get install libamdhip64-5`) on a machine without an AMD GPU.

use hip_runtime_sys::{
    HIP_FUNCTIONS, HipError, HipRuntime, LoadError, hipDeviceAttribute_t, library_candidates, load,
};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The soname of Debian bookworm's runtime.
const DEBIAN_RUNTIME: &str = "libamdhip64.so.5";

#[test]
fn a_missing_library_fails_with_every_path_tried_and_why() {
    let candidates = vec![
        PathBuf::from("/nonexistent/iron-test/libamdhip64.so"),
        PathBuf::from("libiron-test-no-such-library.so.1"),
    ];
    let error = load(&candidates).unwrap_err();
    let LoadError::NotFound { attempts } = &error else {
        panic!("expected NotFound, got {error:?}");
    };
    let tried: Vec<&Path> = attempts.iter().map(|a| a.candidate.as_path()).collect();
    assert_eq!(
        tried,
        candidates.iter().map(PathBuf::as_path).collect::<Vec<_>>()
    );
    for attempt in attempts {
        assert!(
            attempt.reason.contains("No such file"),
            "reason for {}: {}",
            attempt.candidate.display(),
            attempt.reason
        );
    }
    let message = error.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    for candidate in &candidates {
        assert!(message.contains(&*candidate.to_string_lossy()), "{message}");
    }
    assert!(message.contains("IRON_HIP_LIBRARY"), "{message}");
}

#[test]
fn an_explicit_nonexistent_library_is_the_only_candidate() {
    let file = OsStr::new("/nonexistent/iron-test/libamdhip64.so.6");
    let candidates = library_candidates(Some(file), Some(OsStr::new("/opt/rocm-6.4.0")));
    let error = load(&candidates).unwrap_err();
    match error {
        LoadError::NotFound { attempts } => {
            assert_eq!(attempts.len(), 1);
            assert_eq!(attempts[0].candidate, Path::new(file));
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[test]
fn a_library_without_the_hip_functions_is_rejected_by_name() {
    // The C library opens everywhere and exports none of the HIP functions.
    let error = load(&[PathBuf::from("libc.so.6")]).unwrap_err();
    match &error {
        LoadError::MissingSymbols { library, symbols } => {
            assert_eq!(library, Path::new("libc.so.6"));
            assert_eq!(symbols, HIP_FUNCTIONS);
        }
        other => panic!("expected MissingSymbols, got {other:?}"),
    }
    let message = error.to_string();
    assert!(message.contains("libc.so.6"), "{message}");
    assert!(message.contains("hipModuleLaunchKernel"), "{message}");
}

/// Debian's runtime, or `None` (with the reason printed) when it is not installed.
fn debian_runtime() -> Option<&'static HipRuntime> {
    let started = Instant::now();
    match load(&[PathBuf::from(DEBIAN_RUNTIME)]) {
        Ok(runtime) => {
            println!(
                "loaded {} and ran hipInit in {:.1} ms: {}",
                runtime.path().display(),
                started.elapsed().as_secs_f64() * 1e3,
                runtime.init_status()
            );
            Some(runtime)
        }
        Err(error) => {
            assert!(
                std::env::var_os("IRON_REQUIRE_TOOLS").is_none(),
                "Debian's HIP runtime is not installed (apt-get install libamdhip64-5): {error}"
            );
            println!(
                "skipped: Debian's HIP runtime is not installed (apt-get install libamdhip64-5): {error}"
            );
            None
        }
    }
}

/// Whether this machine has the AMD GPU kernel driver, in which case the runtime may find devices.
fn has_amd_gpu_driver() -> bool {
    Path::new("/dev/kfd").exists()
}

#[test]
fn debian_runtime_loads_and_reports_no_device_without_a_gpu() {
    let Some(runtime) = debian_runtime() else {
        return;
    };
    assert!(runtime.get_device_properties_legacy().is_some());
    assert!(
        runtime.get_device_properties_r0600().is_none(),
        "HIP 5.2 predates R0600"
    );
    let version = runtime.runtime_version().unwrap();
    assert_eq!(version / 10_000_000, 5, "HIP major version of {version}");
    assert_eq!(version / 100_000 % 100, 2, "HIP minor version of {version}");
    if has_amd_gpu_driver() {
        println!("skipped the no-device checks: /dev/kfd exists");
        return;
    }

    assert_eq!(runtime.init_status(), HipError::INVALID_DEVICE);
    assert!(runtime.init_status().is_no_device());

    let mut count = -1;
    // SAFETY: writes one int through a valid pointer.
    let status = unsafe { runtime.api().hipGetDeviceCount(&mut count) };
    assert_eq!(status, HipError::NO_DEVICE);
    assert_eq!(count, 0);
    assert_eq!(runtime.device_count(), Ok(0));

    let attribute = hipDeviceAttribute_t::hipDeviceAttributeWarpSize;
    let error = runtime.device_attribute(attribute, 0).unwrap_err();
    assert!(error.is_no_device(), "{error}");
    let error = runtime.device_properties(0).unwrap_err();
    assert!(error.is_no_device(), "{error}");
}

#[test]
fn runtime_error_names_agree_with_the_built_in_table() {
    let Some(runtime) = debian_runtime() else {
        return;
    };
    let api = runtime.api();
    let mut compared = 0;
    for code in HipError::all_built_in() {
        // SAFETY: takes any code, returns a static string or null.
        let name = unsafe { api.hipGetErrorName(code) };
        assert!(!name.is_null(), "{}", code.0);
        // SAFETY: non-null static NUL-terminated string.
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
        let (built_in, _) = code.built_in().unwrap();
        if name == "hipErrorUnknown" && code != HipError::UNKNOWN {
            println!("HIP 5.2 does not know {built_in} ({})", code.0);
            continue;
        }
        assert_eq!(name, built_in, "code {}", code.0);
        assert_eq!(
            code.name(),
            built_in,
            "code {} through HipError::name",
            code.0
        );
        compared += 1;
    }
    assert!(compared > 60, "only {compared} codes compared");
    // A code no header defines: the runtime does not know it, so the fallback answers.
    assert_eq!(HipError(123_456).name(), "hipErrorUnrecognized");
}
