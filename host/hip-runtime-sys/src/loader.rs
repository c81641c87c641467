//! Finding, opening and initializing the HIP runtime library.
//!
//! Where it looks, in order: the file `IRON_HIP_LIBRARY` names (and nothing else when that is
//! set); `$ROCM_PATH/lib/libamdhip64.so`; `/opt/rocm/lib/libamdhip64.so`; then the sonames, newest
//! first, through the dynamic loader's search path. The first library that opens is the one used:
//! if it lacks a required symbol, that is an error rather than a reason to try the next one.
//!
//! A loaded library is never unloaded (unloading libamdhip64 can crash the process): the table is
//! leaked to `'static`, and a library rejected for missing symbols is leaked too.

use crate::generated::{HIP_FUNCTIONS, HipRuntimeApi};
use crate::runtime::{GetDevicePropertiesLegacy, GetDevicePropertiesR0600, HipRuntime};
use libloading::Library;
use std::ffi::{OsStr, c_void};
use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The environment variable naming the HIP runtime library file to load.
pub const LIBRARY_ENV: &str = "IRON_HIP_LIBRARY";

/// The library's sonames, newest ROCm first, then the unversioned development link.
pub const SONAMES: &[&str] = &[
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "libamdhip64.so",
];

/// Why no HIP runtime could be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No candidate opened.
    #[error(
        "no HIP runtime library could be loaded (set {LIBRARY_ENV} to the libamdhip64.so file); \
         tried: {}",
        DisplayAttempts(attempts)
    )]
    NotFound {
        /// Every candidate, with the dynamic loader's reason for refusing it.
        attempts: Vec<LoadAttempt>,
    },
    /// A library opened but lacks functions the table requires.
    #[error(
        "{} is not a usable HIP runtime: it does not export {}",
        library.display(),
        symbols.join(", ")
    )]
    MissingSymbols {
        /// The library that opened.
        library: PathBuf,
        /// The required symbols it lacks.
        symbols: Vec<String>,
    },
}

/// One candidate the loader tried and why it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadAttempt {
    /// A path, or a soname resolved through the loader's search path.
    pub candidate: PathBuf,
    /// The dynamic loader's message.
    pub reason: String,
}

/// Formats attempts as `path (reason); path (reason)`.
struct DisplayAttempts<'a>(&'a [LoadAttempt]);

impl fmt::Display for DisplayAttempts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, attempt) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{} ({})", attempt.candidate.display(), attempt.reason)?;
        }
        Ok(())
    }
}

/// The candidates to try, given the values of `IRON_HIP_LIBRARY` and `ROCM_PATH` (unset or
/// empty values are ignored). A set `IRON_HIP_LIBRARY` is the only candidate.
pub fn library_candidates(
    iron_hip_library: Option<&OsStr>,
    rocm_path: Option<&OsStr>,
) -> Vec<PathBuf> {
    if let Some(file) = iron_hip_library.filter(|value| !value.is_empty()) {
        return vec![PathBuf::from(file)];
    }
    let mut candidates = Vec::new();
    if let Some(root) = rocm_path.filter(|value| !value.is_empty()) {
        candidates.push(PathBuf::from(root).join("lib/libamdhip64.so"));
    }
    candidates.push(PathBuf::from("/opt/rocm/lib/libamdhip64.so"));
    candidates.extend(SONAMES.iter().map(PathBuf::from));
    let mut unique = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        if !unique.contains(&candidate) {
            unique.push(candidate);
        }
    }
    unique
}

/// The candidates this process's environment selects.
pub fn library_candidates_from_env() -> Vec<PathBuf> {
    library_candidates(
        std::env::var_os(LIBRARY_ENV).as_deref(),
        std::env::var_os("ROCM_PATH").as_deref(),
    )
}

/// The process-wide runtime: loaded from the environment's candidates on first use; later calls
/// return the same runtime, or the same error.
pub fn runtime() -> Result<&'static HipRuntime, LoadError> {
    static GLOBAL: OnceLock<Result<&'static HipRuntime, LoadError>> = OnceLock::new();
    GLOBAL
        .get_or_init(|| load(&library_candidates_from_env()))
        .clone()
}

/// The first runtime any load in this process produced, for error texts.
pub(crate) fn loaded() -> Option<&'static HipRuntime> {
    FIRST_LOADED.get().copied()
}

static FIRST_LOADED: OnceLock<&'static HipRuntime> = OnceLock::new();

/// Loads the first candidate that opens, checks that it exports every required function, and
/// calls `hipInit(0)`. Each successful call leaks one table; prefer [`runtime`].
pub fn load(candidates: &[PathBuf]) -> Result<&'static HipRuntime, LoadError> {
    let mut attempts = Vec::new();
    for candidate in candidates {
        // SAFETY: opening the library runs its initializers; a HIP runtime's are sound to run
        // in any process, and the caller chose the candidates.
        match unsafe { Library::new(candidate) } {
            Ok(library) => return initialize(library, candidate.clone()),
            Err(error) => attempts.push(LoadAttempt {
                candidate: candidate.clone(),
                reason: with_sources(&error),
            }),
        }
    }
    Err(LoadError::NotFound { attempts })
}

/// Builds the table from an opened library and initializes the runtime.
fn initialize(library: Library, path: PathBuf) -> Result<&'static HipRuntime, LoadError> {
    let missing: Vec<String> = HIP_FUNCTIONS
        .iter()
        .filter(|name| !exports(&library, name))
        .map(|name| (*name).to_owned())
        .collect();
    if !missing.is_empty() {
        std::mem::forget(library);
        return Err(LoadError::MissingSymbols {
            library: path,
            symbols: missing,
        });
    }
    // SAFETY: the symbol, when present, is HIP's `hipGetDevicePropertiesR0600`, whose C
    // signature is `GetDevicePropertiesR0600`.
    let r0600 =
        unsafe { optional::<GetDevicePropertiesR0600>(&library, "hipGetDevicePropertiesR0600") };
    // SAFETY: the unversioned `hipGetDeviceProperties` has the signature
    // `GetDevicePropertiesLegacy`.
    let legacy =
        unsafe { optional::<GetDevicePropertiesLegacy>(&library, "hipGetDeviceProperties") };
    // SAFETY: every symbol the generated table reads is present (checked above) and has the
    // signature the HIP headers declare for it.
    let api = match unsafe { HipRuntimeApi::from_library(library) } {
        Ok(api) => api,
        Err(error) => {
            return Err(LoadError::MissingSymbols {
                library: path,
                symbols: vec![with_sources(&error)],
            });
        }
    };
    // SAFETY: `hipInit` takes a flags word, which must be 0.
    let init_status = unsafe { api.hipInit(0) };
    let runtime: &'static HipRuntime = Box::leak(Box::new(HipRuntime::new(
        api,
        r0600,
        legacy,
        path,
        init_status,
    )));
    FIRST_LOADED.get_or_init(|| runtime);
    Ok(runtime)
}

/// An error's message followed by those of its sources (libloading keeps the dynamic loader's
/// message in the source).
fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Whether `library` exports `name`.
fn exports(library: &Library, name: &str) -> bool {
    // SAFETY: the symbol is only looked up, never called or read through.
    unsafe { library.get::<*mut c_void>(name.as_bytes()) }.is_ok()
}

/// A function the library may or may not export.
///
/// # Safety
/// `F` must be the C signature of `name`.
unsafe fn optional<F: Copy>(library: &Library, name: &str) -> Option<F> {
    // SAFETY: the caller guarantees the signature; the library is never unloaded, so the
    // pointer stays valid.
    unsafe { library.get::<F>(name.as_bytes()) }
        .ok()
        .map(|symbol| *symbol)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn paths(candidates: &[PathBuf]) -> Vec<&str> {
        candidates.iter().map(|p| p.to_str().unwrap()).collect()
    }

    #[test]
    fn default_order_is_rocm_path_then_opt_rocm_then_sonames_newest_first() {
        let candidates = library_candidates(None, Some(OsStr::new("/usr/local/rocm-6.4")));
        assert_eq!(
            paths(&candidates),
            [
                "/usr/local/rocm-6.4/lib/libamdhip64.so",
                "/opt/rocm/lib/libamdhip64.so",
                "libamdhip64.so.7",
                "libamdhip64.so.6",
                "libamdhip64.so.5",
                "libamdhip64.so",
            ]
        );
    }

    #[test]
    fn unset_or_empty_values_are_ignored_and_duplicates_dropped() {
        let without_rocm = library_candidates(Some(OsStr::new("")), None);
        assert_eq!(without_rocm.len(), 5);
        assert_eq!(without_rocm[0], Path::new("/opt/rocm/lib/libamdhip64.so"));
        let empty_rocm = library_candidates(None, Some(OsStr::new("")));
        assert_eq!(empty_rocm, without_rocm);
        let opt_rocm = library_candidates(None, Some(OsStr::new("/opt/rocm")));
        assert_eq!(opt_rocm, without_rocm);
    }

    #[test]
    fn an_explicit_library_is_the_only_candidate() {
        let candidates = library_candidates(
            Some(OsStr::new(
                "/pip/site-packages/_rocm_sdk/lib/libamdhip64.so.7",
            )),
            Some(OsStr::new("/opt/rocm")),
        );
        assert_eq!(
            paths(&candidates),
            ["/pip/site-packages/_rocm_sdk/lib/libamdhip64.so.7"]
        );
    }
}
