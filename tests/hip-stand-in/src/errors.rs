//! Statuses: the guard every exported function runs in, the calling thread's last error, and
//! the error texts (`hipGetErrorName`, `hipGetErrorString`, `hipGetLastError`).

use std::cell::Cell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use hip_runtime_sys::HipError;

/// The outcome of an exported function's body: `Err` carries the status to return.
pub type HipResult = Result<(), HipError>;

thread_local! {
    /// The last failure a call on this thread returned, until `hipGetLastError` reads it.
    static LAST_ERROR: Cell<HipError> = const { Cell::new(HipError::SUCCESS) };
}

/// Runs the body of the exported function `function`: a panic becomes `hipErrorUnknown` (with a
/// line on stderr) instead of unwinding into C, and a failure is kept as the thread's last error.
pub fn guard(function: &str, body: impl FnOnce() -> HipResult) -> HipError {
    let status = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => HipError::SUCCESS,
        Ok(Err(error)) => error,
        Err(_) => {
            eprintln!("hip-stand-in: {function} panicked: this is a bug of the stand-in");
            HipError::UNKNOWN
        }
    };
    if status != HipError::SUCCESS {
        LAST_ERROR.set(status);
    }
    status
}

/// Prints why `function` fails with `error` (for failures whose code alone does not say which
/// argument or which kernel was at fault) and returns `error`.
pub fn refuse(function: &str, error: HipError, reason: impl std::fmt::Display) -> HipError {
    eprintln!("hip-stand-in: {function}: {}: {reason}", name_of(error));
    error
}

/// One code's C name and description, NUL-terminated, alive for the whole process.
struct ErrorText {
    code: i32,
    name: CString,
    description: CString,
}

/// The texts of every code `hip-runtime-sys` knows.
fn texts() -> &'static [ErrorText] {
    static TEXTS: OnceLock<Vec<ErrorText>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        HipError::all_built_in()
            .filter_map(|error| {
                let (name, description) = error.built_in()?;
                Some(ErrorText {
                    code: error.0,
                    name: CString::new(name).ok()?,
                    description: CString::new(description).ok()?,
                })
            })
            .collect()
    })
}

/// The texts of `error`; those of `hipErrorUnknown` for a code the table lacks, as HIP does.
fn text_of(error: HipError) -> &'static ErrorText {
    let all = texts();
    all.iter()
        .find(|text| text.code == error.0)
        .or_else(|| all.iter().find(|text| text.code == HipError::UNKNOWN.0))
        .expect("the built-in table holds hipErrorUnknown")
}

/// The C name of `error`, for messages.
fn name_of(error: HipError) -> &'static str {
    text_of(error).name.to_str().unwrap_or("hipErrorUnknown")
}

/// `hipGetErrorName`: the code's C name (`hipErrorInvalidValue`), a static NUL-terminated
/// string; `hipErrorUnknown` for a code this runtime does not know.
///
/// # Safety
/// None: takes any code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetErrorName(error: HipError) -> *const c_char {
    catch_unwind(|| text_of(error).name.as_ptr()).unwrap_or(c"hipErrorUnknown".as_ptr())
}

/// `hipGetErrorString`: a one-line description of the code, a static NUL-terminated string.
///
/// # Safety
/// None: takes any code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetErrorString(error: HipError) -> *const c_char {
    catch_unwind(|| text_of(error).description.as_ptr()).unwrap_or(c"unknown error".as_ptr())
}

/// `hipGetLastError`: the last failure a call on this thread returned, which it resets to
/// `hipSuccess`.
///
/// # Safety
/// None: takes no arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetLastError() -> HipError {
    LAST_ERROR.replace(HipError::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn c_text(pointer: *const c_char) -> String {
        assert!(!pointer.is_null());
        // SAFETY: the functions under test return static NUL-terminated strings.
        unsafe { CStr::from_ptr(pointer) }
            .to_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn every_built_in_code_has_its_name_and_description() {
        for error in HipError::all_built_in() {
            let (name, description) = error.built_in().unwrap();
            // SAFETY: takes any code.
            assert_eq!(c_text(unsafe { hipGetErrorName(error) }), name);
            // SAFETY: takes any code.
            assert_eq!(c_text(unsafe { hipGetErrorString(error) }), description);
        }
    }

    #[test]
    fn unknown_codes_are_named_hip_error_unknown() {
        for code in [-1, 10, 99, 123_456, i32::MIN, i32::MAX] {
            // SAFETY: takes any code.
            let name = c_text(unsafe { hipGetErrorName(HipError(code)) });
            assert_eq!(name, "hipErrorUnknown", "{code}");
        }
    }

    #[test]
    fn the_last_error_keeps_failures_until_read() {
        // SAFETY: takes no arguments.
        assert_eq!(unsafe { hipGetLastError() }, HipError::SUCCESS);
        assert_eq!(
            guard("test", || Err(HipError::NOT_FOUND)),
            HipError::NOT_FOUND
        );
        assert_eq!(guard("test", || Ok(())), HipError::SUCCESS);
        // SAFETY: takes no arguments.
        assert_eq!(unsafe { hipGetLastError() }, HipError::NOT_FOUND);
        // SAFETY: takes no arguments.
        assert_eq!(unsafe { hipGetLastError() }, HipError::SUCCESS);
    }

    #[test]
    fn a_panicking_body_returns_unknown() {
        let status = guard("test", || panic!("deliberate panic in a test"));
        assert_eq!(status, HipError::UNKNOWN);
        // SAFETY: takes no arguments.
        assert_eq!(unsafe { hipGetLastError() }, HipError::UNKNOWN);
    }
}
