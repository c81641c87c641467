//! The one error type of a device build: a message a person can act on.

use std::fmt;

/// Why a device build failed: the device compiler's first error, a missing tool and the command
/// that installs it, an unknown gfx, a kernel that spills, ...
///
/// `Debug` prints the same text as `Display`, so that a build script's
/// `fn main() -> Result<(), Box<dyn std::error::Error>>` fails with the readable message rather
/// than a struct dump.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with this message.
    pub(crate) fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The result of a device-build step.
pub type Result<T> = std::result::Result<T, Error>;

/// Adds what was being done to an error from the standard library or a dependency.
pub(crate) trait Context<T> {
    /// On error, `what` (computed only then), a colon and the error.
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::new(format!("{}: {e}", what())))
    }
}

/// Returns early with an [`Error`] made by `format!`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::new(format!($($arg)*)))
    };
}
pub(crate) use bail;
