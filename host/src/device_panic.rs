//! Device panics: what a kernel's failed bounds check, assertion or `panic!` left in its code
//! object's panic record before it trapped.
//!
//! An Iron code object has a global `iron_panic` of [`RECORD_BYTES`] bytes (see
//! `iron_intrinsics::panic`). The first lane of a dispatch to panic claims it and writes where
//! and why; the host reads it when the dispatch faults, reports it in the launch error
//! ([`BackendError::KernelFault`](crate::device::BackendError::KernelFault)'s `panic`) and
//! clears it for the next launch.
//!
//! The record is [`RECORD_BYTES`] / 4 little-endian 32-bit words:
//!
//! | word | what |
//! | --- | --- |
//! | 0 | state: 0 empty, 1 being written, 2 complete |
//! | 1, 2, 3 | workgroup x, y, z |
//! | 4 | wave within the workgroup |
//! | 5 | lane within the wave |
//! | 6, 7 | line, column |
//! | 8, 9, 10 | file: address (low, high word), length in bytes |
//! | 11, 12, 13 | message: address (low, high word), length in bytes |
//! | 14 | bits 0-7: flags, bit 0 the message had arguments and is not recorded (`core`'s formatting), bit 1 the message is a C format whose arguments are in the slots; bits 8-15: the argument slots used |
//! | 15 | unused (0) |
//! | 16 ... | 24 slots of two words (low, high): a number or pointer takes one (integers extended to 64 bits, floats as f64), a `&str` or `bool` two (its text's address, then its length) |
//!
//! The file name, the message and the string arguments are read from device memory (the code
//! object's constants, or a buffer the kernel was given); a formatted message is rendered by
//! the decoder of `print!`'s frames ([`crate::print::cformat`]), as the device's
//! `print!` would have printed it.

use crate::print::cformat::{self, Arguments};
use iron_intrinsics::panic as layout;

/// The symbol of the panic record.
pub const RECORD_SYMBOL: &str = "iron_panic";

/// The record's size in bytes.
pub const RECORD_BYTES: usize = 4 * layout::RECORD_WORDS;

/// The longest file name, message or string argument read back.
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
    /// The message, with its arguments: `index out of bounds: the len is 100 but the index is
    /// 212`. `None` when it had arguments the device did not record (`core`'s `panic!` or
    /// `assert!` with arguments, rather than `iron_intrinsics`').
    pub message: Option<String>,
}

impl DevicePanic {
    /// Reads a record: `None` unless it is complete. `read(address, len)` gives `len` bytes of
    /// device memory at `address`, for the file name, the message and string arguments.
    pub fn from_record(
        record: &[u8; RECORD_BYTES],
        mut read: impl FnMut(u64, usize) -> Option<Vec<u8>>,
    ) -> Option<DevicePanic> {
        let word =
            |i: usize| u32::from_le_bytes(record[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        if word(0) != layout::COMPLETE {
            return None;
        }
        let address = |low: usize| u64::from(word(low)) | u64::from(word(low + 1)) << 32;
        let file = text(&mut read, address(8), word(10) as usize);
        let flags = word(14);
        let message = if flags & layout::LEFT_OUT != 0 {
            None
        } else if flags & layout::FORMAT != 0 {
            let format = bytes(&mut read, address(11), word(13) as usize);
            let slots = &record[4 * layout::SLOTS_AT..];
            let used = ((flags >> layout::SLOTS_SHIFT) as usize & 0xff).min(layout::MAX_SLOTS);
            let mut args = Slots {
                slots: &slots[..8 * used],
                read: &mut read,
            };
            Some(match format {
                Ok(format) => cformat::render_with(&format, &mut args).unwrap_or_else(|problem| {
                    format!(
                        "{} (its arguments could not be read: {problem})",
                        String::from_utf8_lossy(&format)
                    )
                }),
                Err(unreadable) => unreadable,
            })
        } else {
            Some(text(&mut read, address(11), word(13) as usize))
        };
        Some(DevicePanic {
            workgroup: [word(1), word(2), word(3)],
            wave: word(4),
            lane: word(5),
            file,
            line: word(6),
            column: word(7),
            message,
        })
    }
}

/// `len` bytes (at most [`MAX_TEXT`]) of device memory at `address`, or a note saying they are
/// unreadable.
fn bytes(
    read: &mut impl FnMut(u64, usize) -> Option<Vec<u8>>,
    address: u64,
    len: usize,
) -> Result<Vec<u8>, String> {
    let len = len.min(MAX_TEXT);
    if len == 0 {
        return Ok(Vec::new());
    }
    read(address, len).ok_or_else(|| format!("<unreadable at {address:#x}>"))
}

/// The text of [`bytes`], or the note.
fn text(read: &mut impl FnMut(u64, usize) -> Option<Vec<u8>>, address: u64, len: usize) -> String {
    bytes(read, address, len).map_or_else(
        |unreadable| unreadable,
        |b| String::from_utf8_lossy(&b).into_owned(),
    )
}

/// A record's argument slots, as the renderer asks for them.
struct Slots<'a, R> {
    /// The slots not yet taken.
    slots: &'a [u8],
    read: &'a mut R,
}

impl<R: FnMut(u64, usize) -> Option<Vec<u8>>> Arguments for Slots<'_, R> {
    fn number(&mut self) -> Result<u64, String> {
        let Some((slot, rest)) = self.slots.split_first_chunk::<8>() else {
            return Err("the record has fewer arguments than its format".into());
        };
        self.slots = rest;
        Ok(u64::from_le_bytes(*slot))
    }

    fn string(&mut self) -> Result<String, String> {
        let address = self.number()?;
        let len = self.number()? as usize;
        Ok(text(self.read, address, len))
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
                "a message with arguments, which core's panic! and assert! do not record on \
                 the device (use iron_intrinsics::panic!, assert!, assert_eq! or assert_ne!, \
                 which record them)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `header` (words 0 to 15) and `slots`.
    fn record(header: [u32; 16], slots: &[u64]) -> [u8; RECORD_BYTES] {
        let mut bytes = [0; RECORD_BYTES];
        for (i, w) in header.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        for (i, s) in slots.iter().enumerate() {
            let at = 4 * layout::SLOTS_AT + 8 * i;
            bytes[at..at + 8].copy_from_slice(&s.to_le_bytes());
        }
        bytes
    }

    /// Device memory holding `texts` at their addresses.
    fn memory(texts: &[(u64, &'static str)]) -> impl FnMut(u64, usize) -> Option<Vec<u8>> + use<> {
        let texts = texts.to_vec();
        move |address, len| {
            texts
                .iter()
                .find(|(at, _)| *at == address)
                .map(|(_, t)| t.as_bytes().to_vec())
                .filter(|b| b.len() == len)
        }
    }

    const FILE: (u64, &str) = (0x1_0000_1000, "src/lib.rs");

    #[test]
    fn a_constant_message_reads_back_with_the_site() {
        let words = [2, 1, 2, 3, 4, 17, 81, 9, 0x1000, 1, 10, 0x2000, 1, 5, 0, 0];
        let read = memory(&[FILE, (0x1_0000_2000, "boom!")]);
        let panic = DevicePanic::from_record(&record(words, &[]), read).unwrap();
        assert_eq!(
            panic.to_string(),
            "panicked at src/lib.rs:81:9 in workgroup (1, 2, 3) wave 4 lane 17: boom!"
        );
    }

    #[test]
    fn a_message_left_out_says_how_to_record_it() {
        let words = [2, 0, 0, 0, 0, 0, 5, 1, 0x1000, 1, 10, 0, 0, 0, 1, 0];
        let panic = DevicePanic::from_record(&record(words, &[]), memory(&[FILE])).unwrap();
        assert_eq!(panic.message, None);
        let text = panic.to_string();
        assert!(text.contains("a message with arguments"), "{text}");
        assert!(text.contains("iron_intrinsics::panic!, assert!"), "{text}");
    }

    #[test]
    fn a_format_is_rendered_with_the_slots() {
        let format = "index out of bounds: the len is %lu but the index is %lu";
        let mut words = [
            2,
            0,
            0,
            0,
            1,
            3,
            12,
            5,
            0x1000,
            1,
            10,
            0x3000,
            1,
            0,
            2 | 2 << 8,
            0,
        ];
        words[13] = format.len() as u32;
        let read = memory(&[FILE, (0x1_0000_3000, format)]);
        let panic = DevicePanic::from_record(&record(words, &[100, 212]), read).unwrap();
        assert_eq!(
            panic.message.as_deref(),
            Some("index out of bounds: the len is 100 but the index is 212")
        );
        assert!(
            panic.to_string().ends_with(
                "wave 1 lane 3: index out of bounds: the len is 100 but the index is 212"
            )
        );
    }

    #[test]
    fn strings_floats_and_signs_render_as_print_does() {
        let format = "x[%u] = %.2f (%s, %s) %d %#x";
        let mut words = [2, 0, 0, 0, 0, 0, 1, 1, 0x1000, 1, 10, 0x3000, 1, 0, 2, 0];
        words[13] = format.len() as u32;
        let slots: [u64; 8] = [
            7,
            2.5f64.to_bits(),
            0x1_0000_4000,
            4,
            0x1_0000_5000,
            8,
            -3i64 as u64,
            255,
        ];
        words[14] |= (slots.len() as u32) << 8;
        let read = memory(&[
            FILE,
            (0x1_0000_3000, format),
            (0x1_0000_4000, "true"),
            (0x1_0000_5000, "all ones"),
        ]);
        let panic = DevicePanic::from_record(&record(words, &slots), read).unwrap();
        assert_eq!(
            panic.message.as_deref(),
            Some("x[7] = 2.50 (true, all ones) -3 0xff")
        );
    }

    #[test]
    fn missing_slots_and_unreadable_strings_are_said() {
        let format = "%u %u %s";
        let mut words = [
            2,
            0,
            0,
            0,
            0,
            0,
            1,
            1,
            0x1000,
            1,
            10,
            0x3000,
            1,
            0,
            2 | 1 << 8,
            0,
        ];
        words[13] = format.len() as u32;
        let read = memory(&[FILE, (0x1_0000_3000, format)]);
        let panic = DevicePanic::from_record(&record(words, &[5, 6]), read).unwrap();
        assert_eq!(
            panic.message.as_deref(),
            Some(
                "%u %u %s (its arguments could not be read: the record has fewer arguments than its format)"
            )
        );
        words[14] = 2 | 4 << 8;
        let read = memory(&[FILE, (0x1_0000_3000, format)]);
        let panic = DevicePanic::from_record(&record(words, &[5, 6, 0x9000, 3]), read).unwrap();
        assert_eq!(panic.message.as_deref(), Some("5 6 <unreadable at 0x9000>"));
        words[14] = 2 | 200 << 8;
        let read = memory(&[FILE, (0x1_0000_3000, format)]);
        let panic = DevicePanic::from_record(&record(words, &[5, 6]), read).unwrap();
        assert!(panic.message.unwrap().starts_with("5 6 "));
    }

    #[test]
    fn incomplete_records_and_unreadable_texts() {
        assert_eq!(
            DevicePanic::from_record(&[0; RECORD_BYTES], |_, _| None),
            None
        );
        let mut words = [0; 16];
        words[0] = 1;
        assert_eq!(
            DevicePanic::from_record(&record(words, &[]), |_, _| None),
            None
        );
        words[0] = 2;
        words[10] = 3;
        let panic = DevicePanic::from_record(&record(words, &[]), |_, _| None).unwrap();
        assert_eq!(panic.file, "<unreadable at 0x0>");
        assert_eq!(panic.message.as_deref(), Some(""));
    }

    #[test]
    fn the_layout_is_the_devices() {
        assert_eq!(RECORD_BYTES, 256);
        assert_eq!(
            layout::SLOTS_AT + 2 * layout::MAX_SLOTS,
            layout::RECORD_WORDS
        );
    }
}
