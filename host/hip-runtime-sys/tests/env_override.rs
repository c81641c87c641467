//! `IRON_HIP_LIBRARY` decides what the process-wide runtime loads. Alone in its test binary
//! because it sets the process environment.

use hip_runtime_sys::{HipError, LIBRARY_ENV, LoadError, runtime};
use std::path::Path;

#[test]
fn the_environment_variable_names_the_only_library_tried() {
    let file = "/nonexistent/iron-env-test/libamdhip64.so";
    // SAFETY: this is the binary's only test, so no other thread reads the environment.
    unsafe { std::env::set_var(LIBRARY_ENV, file) };

    let error = runtime().unwrap_err();
    match &error {
        LoadError::NotFound { attempts } => {
            assert_eq!(attempts.len(), 1);
            assert_eq!(attempts[0].candidate, Path::new(file));
            assert!(
                attempts[0].reason.contains("No such file"),
                "{}",
                attempts[0].reason
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    // The outcome is cached: the same error, without another attempt.
    assert_eq!(runtime().unwrap_err(), error);

    // With no runtime loaded, error texts come from the built-in table.
    assert_eq!(HipError::NO_DEVICE.name(), "hipErrorNoDevice");
    let text = HipError::NO_BINARY_FOR_GPU.to_string();
    let prefix = "hipErrorNoBinaryForGpu (209): ";
    assert!(
        text.starts_with(prefix) && text.len() > prefix.len(),
        "{text}"
    );
}
