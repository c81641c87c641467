//! Device panics: what a kernel's failed bounds check, assertion or `panic!` left in its code
//! object's panic record before it trapped.
//!
//! An Iron code object has a global `iron_panic` of [`RECORD_BYTES`] bytes (see
//! `iron_intrinsics`' panic handler). The first lane of a dispatch to panic claims it and writes
//! where and what; the host reads it when the dispatch faults, reports it in the launch error
//! ([`BackendError::KernelFault`](crate::device::BackendError::KernelFault)'s `panic`) and
//! clears it for the next launch.

/// The symbol of the panic record.
pub const RECORD_SYMBOL: &str = "iron_panic";

/// The record's size: 16 little-endian words.
pub const RECORD_BYTES: usize = 64;

/// The state word of a complete record.
const COMPLETE: u32 = 2;

/// Flag bit: the message had arguments, which the device does not format.
const FORMATTED: u32 = 1;

/// The longest file name or message read back.
const MAX_TEXT: usize = 4096;

/// Where and why a kernel panicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevicePanic {
    /// The panicking work-item's workgroup.
    pub workgroup: [u32; 3],
    /// Its wave within the workgroup.
    pub wave: u32,
    /// Its lane within the wave.
    pub lane: u32,
    /// The source file of the failed check, as the kernel crate's compiler saw it.
    pub file: String,
    /// The line.
    pub line: u32,
    /// The column.
    pub column: u32,
    /// The message, when it is a constant; `None` when it had arguments (a bounds check's,
    /// `assert!(x, "{}", y)`), which the device leaves out.
    pub message: Option<String>,
}

impl DevicePanic {
    /// Reads a record: `None` unless it is complete. `read(address, len)` gives `len` bytes of
    /// device memory at `address`, for the file name and message the record points to.
    pub fn from_record(
        record: &[u8; RECORD_BYTES],
        mut read: impl FnMut(u64, usize) -> Option<Vec<u8>>,
    ) -> Option<DevicePanic> {
        let word =
            |i: usize| u32::from_le_bytes(record[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        if word(0) != COMPLETE {
            return None;
        }
        let mut text = |low: usize, len: usize| {
            let address = u64::from(word(low)) | u64::from(word(low + 1)) << 32;
            let len = (word(len) as usize).min(MAX_TEXT);
            if len == 0 {
                return String::new();
            }
            read(address, len)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_else(|| format!("<unreadable at {address:#x}>"))
        };
        let file = text(8, 10);
        let message = text(11, 13);
        Some(DevicePanic {
            workgroup: [word(1), word(2), word(3)],
            wave: word(4),
            lane: word(5),
            file,
            line: word(6),
            column: word(7),
            message: (word(14) & FORMATTED == 0).then_some(message),
        })
    }
}

impl std::fmt::Display for DevicePanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.workgroup;
        write!(
            f,
            "panicked at {}:{}:{} in workgroup ({x}, {y}, {z}) wave {} lane {}: ",
            self.file, self.line, self.column, self.wave, self.lane
        )?;
        match &self.message {
            Some(message) => f.write_str(message),
            None => f.write_str(
                "a message with arguments (the device records constant messages only; \
                 print the values with iron_intrinsics::println! before the check)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(words: [u32; 16]) -> [u8; RECORD_BYTES] {
        let mut bytes = [0; RECORD_BYTES];
        for (i, w) in words.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        bytes
    }

    #[test]
    fn a_complete_record_reads_back_with_its_texts() {
        let words = [2, 1, 2, 3, 4, 17, 81, 9, 0x1000, 1, 10, 0x2000, 1, 5, 0, 0];
        let read = |address: u64, len: usize| {
            match address {
                0x1_0000_1000 => Some(b"src/lib.rs".to_vec()),
                0x1_0000_2000 => Some(b"boom!".to_vec()),
                _ => None,
            }
            .filter(|b| b.len() == len)
        };
        let panic = DevicePanic::from_record(&record(words), read).unwrap();
        assert_eq!(
            panic.to_string(),
            "panicked at src/lib.rs:81:9 in workgroup (1, 2, 3) wave 4 lane 17: boom!"
        );
        let mut formatted = words;
        formatted[14] = 1;
        let panic = DevicePanic::from_record(&record(formatted), read).unwrap();
        assert_eq!(panic.message, None);
        assert!(panic.to_string().contains("a message with arguments"));
    }

    #[test]
    fn incomplete_records_and_unreadable_texts() {
        assert_eq!(
            DevicePanic::from_record(&[0; RECORD_BYTES], |_, _| None),
            None
        );
        let mut words = [0; 16];
        words[0] = 1;
        assert_eq!(DevicePanic::from_record(&record(words), |_, _| None), None);
        words[0] = 2;
        words[10] = 3;
        let panic = DevicePanic::from_record(&record(words), |_, _| None).unwrap();
        assert_eq!(panic.file, "<unreadable at 0x0>");
        assert_eq!(panic.message.as_deref(), Some(""));
    }
}
