//! `HipError`: the status every HIP runtime call returns, as an open set of codes.
//!
//! A Rust enum would make a code it does not list undefined behaviour, and newer runtimes return
//! codes older headers lack; a newtype over the C enum's value takes any code. The values below
//! are those of `hipError_t` in HIP's `hip_runtime_api.h`, identical in HIP 5.2 and 6.x/7.x
//! except the codes marked as added later.

use std::borrow::Cow;
use std::ffi::{CStr, c_char};
use std::fmt;

/// A HIP status code (`hipError_t`), success included.
///
/// Same size and calling convention as the C enum, so the function table returns it directly.
/// Check it with [`HipError::ok`].
#[repr(transparent)]
#[must_use = "a HIP status reports whether the call failed"]
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct HipError(pub i32);

/// One row of the built-in table: constant, code, C name, description.
macro_rules! hip_error_codes {
    ($($(#[$attr:meta])* $konst:ident = $code:literal, $name:literal, $description:literal;)*) => {
        impl HipError {
            $(
                #[doc = concat!("`", $name, "` (", stringify!($code), "): ", $description, ".")]
                $(#[$attr])*
                pub const $konst: HipError = HipError($code);
            )*
        }

        /// Every code the headers define: (code, C name, description).
        const BUILT_IN: &[(i32, &str, &str)] = &[$(($code, $name, $description)),*];
    };
}

hip_error_codes! {
    SUCCESS = 0, "hipSuccess", "no error";
    INVALID_VALUE = 1, "hipErrorInvalidValue", "an argument is null or out of range";
    OUT_OF_MEMORY = 2, "hipErrorOutOfMemory", "out of device memory";
    NOT_INITIALIZED = 3, "hipErrorNotInitialized", "the runtime is not initialized";
    DEINITIALIZED = 4, "hipErrorDeinitialized", "the runtime is shutting down";
    PROFILER_DISABLED = 5, "hipErrorProfilerDisabled", "the profiler is disabled";
    PROFILER_NOT_INITIALIZED = 6, "hipErrorProfilerNotInitialized", "the profiler is not initialized";
    PROFILER_ALREADY_STARTED = 7, "hipErrorProfilerAlreadyStarted", "the profiler is already started";
    PROFILER_ALREADY_STOPPED = 8, "hipErrorProfilerAlreadyStopped", "the profiler is already stopped";
    INVALID_CONFIGURATION = 9, "hipErrorInvalidConfiguration", "invalid launch configuration";
    INVALID_PITCH_VALUE = 12, "hipErrorInvalidPitchValue", "invalid pitch";
    INVALID_SYMBOL = 13, "hipErrorInvalidSymbol", "invalid symbol";
    INVALID_DEVICE_POINTER = 17, "hipErrorInvalidDevicePointer", "invalid device pointer";
    INVALID_MEMCPY_DIRECTION = 21, "hipErrorInvalidMemcpyDirection", "invalid copy direction";
    INSUFFICIENT_DRIVER = 35, "hipErrorInsufficientDriver", "the driver is older than the runtime";
    MISSING_CONFIGURATION = 52, "hipErrorMissingConfiguration", "missing launch configuration";
    PRIOR_LAUNCH_FAILURE = 53, "hipErrorPriorLaunchFailure", "an earlier launch failed";
    INVALID_DEVICE_FUNCTION = 98, "hipErrorInvalidDeviceFunction", "invalid device function";
    NO_DEVICE = 100, "hipErrorNoDevice", "no HIP-capable device";
    INVALID_DEVICE = 101, "hipErrorInvalidDevice", "invalid device ordinal";
    INVALID_IMAGE = 200, "hipErrorInvalidImage", "invalid code object image";
    INVALID_CONTEXT = 201, "hipErrorInvalidContext", "invalid context";
    CONTEXT_ALREADY_CURRENT = 202, "hipErrorContextAlreadyCurrent", "the context is already current";
    MAP_FAILED = 205, "hipErrorMapFailed", "mapping failed";
    UNMAP_FAILED = 206, "hipErrorUnmapFailed", "unmapping failed";
    ARRAY_IS_MAPPED = 207, "hipErrorArrayIsMapped", "the array is mapped";
    ALREADY_MAPPED = 208, "hipErrorAlreadyMapped", "already mapped";
    NO_BINARY_FOR_GPU = 209, "hipErrorNoBinaryForGpu", "no code object for this device's target";
    ALREADY_ACQUIRED = 210, "hipErrorAlreadyAcquired", "already acquired";
    NOT_MAPPED = 211, "hipErrorNotMapped", "not mapped";
    NOT_MAPPED_AS_ARRAY = 212, "hipErrorNotMappedAsArray", "not mapped as an array";
    NOT_MAPPED_AS_POINTER = 213, "hipErrorNotMappedAsPointer", "not mapped as a pointer";
    ECC_NOT_CORRECTABLE = 214, "hipErrorECCNotCorrectable", "uncorrectable ECC error";
    UNSUPPORTED_LIMIT = 215, "hipErrorUnsupportedLimit", "unsupported limit";
    CONTEXT_ALREADY_IN_USE = 216, "hipErrorContextAlreadyInUse", "the context is already in use";
    PEER_ACCESS_UNSUPPORTED = 217, "hipErrorPeerAccessUnsupported", "peer access is unsupported";
    INVALID_KERNEL_FILE = 218, "hipErrorInvalidKernelFile", "invalid kernel file";
    INVALID_GRAPHICS_CONTEXT = 219, "hipErrorInvalidGraphicsContext", "invalid graphics context";
    INVALID_SOURCE = 300, "hipErrorInvalidSource", "invalid source";
    FILE_NOT_FOUND = 301, "hipErrorFileNotFound", "file not found";
    SHARED_OBJECT_SYMBOL_NOT_FOUND = 302, "hipErrorSharedObjectSymbolNotFound", "shared object symbol not found";
    SHARED_OBJECT_INIT_FAILED = 303, "hipErrorSharedObjectInitFailed", "shared object initialization failed";
    OPERATING_SYSTEM = 304, "hipErrorOperatingSystem", "an operating system call failed";
    INVALID_HANDLE = 400, "hipErrorInvalidHandle", "invalid handle (stream, event, module or function)";
    ILLEGAL_STATE = 401, "hipErrorIllegalState", "the resource is not in a valid state for the operation";
    NOT_FOUND = 500, "hipErrorNotFound", "named symbol not found";
    NOT_READY = 600, "hipErrorNotReady", "queued work has not completed yet";
    ILLEGAL_ADDRESS = 700, "hipErrorIllegalAddress", "a kernel accessed an illegal address";
    LAUNCH_OUT_OF_RESOURCES = 701, "hipErrorLaunchOutOfResources", "the launch needs more resources than available";
    LAUNCH_TIME_OUT = 702, "hipErrorLaunchTimeOut", "the kernel timed out";
    PEER_ACCESS_ALREADY_ENABLED = 704, "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled";
    PEER_ACCESS_NOT_ENABLED = 705, "hipErrorPeerAccessNotEnabled", "peer access is not enabled";
    SET_ON_ACTIVE_PROCESS = 708, "hipErrorSetOnActiveProcess", "cannot set this on an active process";
    CONTEXT_IS_DESTROYED = 709, "hipErrorContextIsDestroyed", "the context is destroyed";
    ASSERT = 710, "hipErrorAssert", "a kernel assertion failed";
    HOST_MEMORY_ALREADY_REGISTERED = 712, "hipErrorHostMemoryAlreadyRegistered", "host memory is already registered";
    HOST_MEMORY_NOT_REGISTERED = 713, "hipErrorHostMemoryNotRegistered", "host memory is not registered";
    LAUNCH_FAILURE = 719, "hipErrorLaunchFailure", "a kernel failed on the device";
    COOPERATIVE_LAUNCH_TOO_LARGE = 720, "hipErrorCooperativeLaunchTooLarge", "too many blocks for a cooperative launch";
    NOT_SUPPORTED = 801, "hipErrorNotSupported", "not supported by this runtime or device";
    STREAM_CAPTURE_UNSUPPORTED = 900, "hipErrorStreamCaptureUnsupported", "not permitted while the stream is capturing";
    STREAM_CAPTURE_INVALIDATED = 901, "hipErrorStreamCaptureInvalidated", "the stream capture was invalidated";
    STREAM_CAPTURE_MERGE = 902, "hipErrorStreamCaptureMerge", "would merge two stream captures";
    STREAM_CAPTURE_UNMATCHED = 903, "hipErrorStreamCaptureUnmatched", "the capture did not start in this stream";
    STREAM_CAPTURE_UNJOINED = 904, "hipErrorStreamCaptureUnjoined", "the capture forked without joining";
    STREAM_CAPTURE_ISOLATION = 905, "hipErrorStreamCaptureIsolation", "would cross the capture boundary";
    STREAM_CAPTURE_IMPLICIT = 906, "hipErrorStreamCaptureImplicit", "would depend implicitly on a capture";
    CAPTURED_EVENT = 907, "hipErrorCapturedEvent", "not permitted on an event recorded in a capture";
    STREAM_CAPTURE_WRONG_THREAD = 908, "hipErrorStreamCaptureWrongThread", "the capture ended on another thread";
    GRAPH_EXEC_UPDATE_FAILURE = 910, "hipErrorGraphExecUpdateFailure", "the graph update was not performed";
    /// Added in HIP 6.x headers: HIP 5.2's runtime does not know it.
    INVALID_CHANNEL_DESCRIPTOR = 911, "hipErrorInvalidChannelDescriptor", "invalid channel descriptor";
    /// Added in HIP 6.x headers: HIP 5.2's runtime does not know it.
    INVALID_TEXTURE = 912, "hipErrorInvalidTexture", "invalid texture";
    UNKNOWN = 999, "hipErrorUnknown", "unknown error";
    RUNTIME_MEMORY = 1052, "hipErrorRuntimeMemory", "an HSA runtime memory call failed";
    RUNTIME_OTHER = 1053, "hipErrorRuntimeOther", "an HSA runtime call failed";
}

impl HipError {
    /// `Ok(())` for [`HipError::SUCCESS`], else `Err(self)`: the `result` layer over raw calls.
    pub fn ok(self) -> Result<(), HipError> {
        if self == HipError::SUCCESS {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// Whether this code means the machine has no usable AMD GPU: `hipInit` and
    /// `hipGetDeviceCount` return [`HipError::NO_DEVICE`] or [`HipError::INVALID_DEVICE`] then.
    pub fn is_no_device(self) -> bool {
        self == HipError::NO_DEVICE || self == HipError::INVALID_DEVICE
    }

    /// The C name (`hipErrorNoDevice`): from the loaded runtime's `hipGetErrorName` when a
    /// runtime is loaded and knows the code, else from the built-in table.
    pub fn name(self) -> Cow<'static, str> {
        match self.runtime_texts() {
            Some((name, _)) => Cow::Owned(name),
            None => Cow::Borrowed(
                self.built_in()
                    .map_or("hipErrorUnrecognized", |(name, _)| name),
            ),
        }
    }

    /// A one-line description: from the loaded runtime's `hipGetErrorString` when a runtime is
    /// loaded and knows the code, else from the built-in table.
    pub fn description(self) -> Cow<'static, str> {
        match self.runtime_texts() {
            Some((_, description)) => Cow::Owned(description),
            None => Cow::Borrowed(
                self.built_in()
                    .map_or("a code this crate does not know", |(_, text)| text),
            ),
        }
    }

    /// The built-in (name, description) of this code, if the headers define it.
    pub fn built_in(self) -> Option<(&'static str, &'static str)> {
        BUILT_IN
            .iter()
            .find(|(code, _, _)| *code == self.0)
            .map(|&(_, name, text)| (name, text))
    }

    /// Every code in the built-in table, in ascending order.
    pub fn all_built_in() -> impl Iterator<Item = HipError> {
        BUILT_IN.iter().map(|&(code, _, _)| HipError(code))
    }

    /// The loaded runtime's (name, description) of this code; `None` when no runtime is loaded
    /// or the runtime does not know the code (it names every code it lacks `hipErrorUnknown`).
    fn runtime_texts(self) -> Option<(String, String)> {
        let api = crate::loader::loaded()?.api();
        // SAFETY: `hipGetErrorName` takes any code and returns null or a static string of the
        // runtime, which is never unloaded.
        let name = unsafe { static_text(api.hipGetErrorName(self)) }?;
        if name == "hipErrorUnknown" && self != HipError::UNKNOWN {
            return None;
        }
        // SAFETY: as above, for `hipGetErrorString`.
        let description = unsafe { static_text(api.hipGetErrorString(self)) };
        // Some runtimes (HIP 5.2) describe a code by its name: the table's text says more.
        let description = match (description, self.built_in()) {
            (Some(text), Some((_, built_in))) if text == name => built_in.to_owned(),
            (Some(text), _) => text,
            (None, built_in) => built_in.map_or_else(String::new, |(_, text)| text.to_owned()),
        };
        Some((name, description))
    }
}

/// Copies a C string the runtime owns; `None` for null.
///
/// # Safety
/// `pointer` is null or points to a NUL-terminated string that outlives this call.
unsafe fn static_text(pointer: *const c_char) -> Option<String> {
    if pointer.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated, as the caller guarantees.
    let text = unsafe { CStr::from_ptr(pointer) };
    Some(text.to_string_lossy().into_owned())
}

impl fmt::Debug for HipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HipError({}, {})", self.0, self.name())
    }
}

impl fmt::Display for HipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.name(), self.0, self.description())
    }
}

impl std::error::Error for HipError {}

impl From<HipError> for i32 {
    fn from(error: HipError) -> i32 {
        error.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_codes_have_the_header_values_and_names() {
        let expected = [
            (HipError::SUCCESS, 0, "hipSuccess"),
            (HipError::INVALID_VALUE, 1, "hipErrorInvalidValue"),
            (HipError::OUT_OF_MEMORY, 2, "hipErrorOutOfMemory"),
            (HipError::NOT_INITIALIZED, 3, "hipErrorNotInitialized"),
            (HipError::NO_DEVICE, 100, "hipErrorNoDevice"),
            (HipError::INVALID_DEVICE, 101, "hipErrorInvalidDevice"),
            (HipError::INVALID_IMAGE, 200, "hipErrorInvalidImage"),
            (HipError::NO_BINARY_FOR_GPU, 209, "hipErrorNoBinaryForGpu"),
            (
                HipError::SHARED_OBJECT_INIT_FAILED,
                303,
                "hipErrorSharedObjectInitFailed",
            ),
            (HipError::INVALID_HANDLE, 400, "hipErrorInvalidHandle"),
            (HipError::NOT_FOUND, 500, "hipErrorNotFound"),
            (HipError::NOT_READY, 600, "hipErrorNotReady"),
            (HipError::ILLEGAL_ADDRESS, 700, "hipErrorIllegalAddress"),
            (
                HipError::LAUNCH_OUT_OF_RESOURCES,
                701,
                "hipErrorLaunchOutOfResources",
            ),
            (HipError::LAUNCH_FAILURE, 719, "hipErrorLaunchFailure"),
            (HipError::NOT_SUPPORTED, 801, "hipErrorNotSupported"),
            (HipError::UNKNOWN, 999, "hipErrorUnknown"),
        ];
        for (error, code, name) in expected {
            assert_eq!(error.0, code, "{name}");
            // No runtime is loaded in this test binary: the names come from the table.
            assert_eq!(error.name(), name);
        }
    }

    #[test]
    fn the_table_is_ascending_with_unique_names() {
        for pair in BUILT_IN.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} then {}", pair[0].1, pair[1].1);
        }
        let mut names: Vec<&str> = BUILT_IN.iter().map(|row| row.1).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), BUILT_IN.len());
        assert!(
            BUILT_IN
                .iter()
                .all(|row| row.1.starts_with("hip") && !row.2.is_empty())
        );
    }

    #[test]
    fn ok_and_no_device_over_a_range_of_codes() {
        for code in -2000..3000 {
            let error = HipError(code);
            assert_eq!(error.ok().is_ok(), code == 0, "{code}");
            if code != 0 {
                assert_eq!(error.ok(), Err(error));
            }
            assert_eq!(error.is_no_device(), code == 100 || code == 101, "{code}");
        }
    }

    #[test]
    fn codes_outside_the_table_still_format() {
        let error = HipError(4242);
        assert!(error.built_in().is_none());
        assert_eq!(error.name(), "hipErrorUnrecognized");
        let text = error.to_string();
        assert!(text.starts_with("hipErrorUnrecognized (4242): "), "{text}");
        assert_eq!(format!("{error:?}"), "HipError(4242, hipErrorUnrecognized)");
        assert_eq!(i32::from(HipError(-7)), -7);
    }
}
