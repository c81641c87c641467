//! Device printing on the host: the printf buffer a kernel that prints gets, and the decoding
//! of what it wrote, as the HIP runtime does it.
//!
//! A kernel prints (`iron_intrinsics::print!`, or a HIP C++ kernel's `printf`) when its
//! metadata has a `hidden_printf_buffer` argument. On ROCm the HIP runtime passes the buffer
//! and prints it to stdout after the kernel; on the emulator (and so on the HIP stand-in) Iron
//! does the same with [`PrintBuffer`]. The buffer is two words (bytes used, bytes available)
//! and then frames: a control word (frame size times 4; bit 1 set when the format is constant
//! and given by its hash in `amdhsa.printf`, clear when the format string follows inline),
//! then the format, then the arguments (see [`cformat`]).

pub mod cformat;

use std::collections::HashMap;

/// Bytes of the buffer's header: the bytes used so far, then the bytes available after it.
pub const HEADER_BYTES: usize = 8;

/// The line a full buffer leaves in place of the output it dropped (`iron_intrinsics::print`).
pub const DROPPED_LINE: &str = "iron: the print buffer is full: output was dropped\n";

/// The default size of an emulated printf buffer: 1 MiB.
pub const DEFAULT_BUFFER_BYTES: usize = 1 << 20;

/// A printf buffer's initial contents and how to read it back.
pub struct PrintBuffer;

impl PrintBuffer {
    /// The header of an empty buffer of `bytes` bytes (nothing used, the rest available).
    pub fn header(bytes: usize) -> [u8; HEADER_BYTES] {
        let available = u32::try_from(bytes.saturating_sub(HEADER_BYTES)).unwrap_or(u32::MAX);
        let mut header = [0; HEADER_BYTES];
        header[4..].copy_from_slice(&available.to_le_bytes());
        header
    }

    /// The bytes of a buffer the device wrote, as far as the header's used count says: how
    /// many to read back from a buffer whose first 8 bytes are `header`.
    pub fn used(header: &[u8; HEADER_BYTES]) -> usize {
        let used = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let available = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        HEADER_BYTES + used.min(available)
    }
}

/// What a printf buffer held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrintOutput {
    /// The printed text, frame after frame.
    pub text: String,
    /// Frames decoded.
    pub frames: usize,
    /// Whether the device dropped output because the buffer was full.
    pub dropped: bool,
    /// What stopped decoding early (a frame that is not well formed), if anything.
    pub corrupt: Option<String>,
}

/// Decodes the frames of `buffer` (the header and the used bytes after it) with the constant
/// formats `formats` (`amdhsa.printf` entries, `0:0:<hash>,<format>`).
pub fn decode(buffer: &[u8], formats: &[String]) -> PrintOutput {
    let constant: HashMap<u64, &str> = formats
        .iter()
        .filter_map(|entry| {
            let (_, rest) = entry.split_once("0:0:")?;
            let (hash, format) = rest.split_once(',')?;
            Some((u64::from_str_radix(hash, 16).ok()?, format))
        })
        .collect();
    let mut output = PrintOutput::default();
    let Some(header) = buffer.first_chunk::<HEADER_BYTES>() else {
        output.corrupt = Some(format!(
            "a printf buffer of {} bytes has no header",
            buffer.len()
        ));
        return output;
    };
    let end = PrintBuffer::used(header).min(buffer.len());
    let mut at = HEADER_BYTES;
    while at < end {
        match frame(&buffer[at..end], &constant) {
            Ok((text, size)) => {
                output.dropped |= text == DROPPED_LINE;
                output.text.push_str(&text);
                output.frames += 1;
                at += size;
            }
            Err(problem) => {
                output.corrupt = Some(format!("printf frame at byte {at}: {problem}"));
                break;
            }
        }
    }
    output
}

/// The text of the frame at the start of `bytes`, and its size.
fn frame(bytes: &[u8], constant: &HashMap<u64, &str>) -> Result<(String, usize), String> {
    let control = bytes
        .first_chunk::<4>()
        .map(|w| u32::from_le_bytes(*w))
        .ok_or("a control word cut short")?;
    let size = (control >> 2) as usize;
    if size < 4 || size > bytes.len() || !size.is_multiple_of(4) {
        return Err(format!(
            "a size of {size} bytes where {} remain",
            bytes.len()
        ));
    }
    let body = &bytes[4..size];
    let (format, args): (&[u8], &[u8]) = if control & 2 != 0 {
        let hash = body
            .first_chunk::<8>()
            .map(|h| u64::from_le_bytes(*h))
            .ok_or("a constant-format frame without its hash")?;
        let format = constant
            .get(&hash)
            .ok_or_else(|| format!("no amdhsa.printf format has the hash {hash:x}"))?;
        (format.as_bytes(), &body[8..])
    } else {
        let nul = body
            .iter()
            .position(|&b| b == 0)
            .ok_or("an inline format string without its NUL")?;
        let stored = (nul + 1).next_multiple_of(8).min(body.len());
        (&body[..nul], &body[stored..])
    };
    Ok((cformat::render(format, args)?, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer holding `frames`, with its header.
    fn buffer(frames: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = frames.concat();
        let mut bytes = PrintBuffer::header(HEADER_BYTES + body.len() + 64).to_vec();
        bytes[..4].copy_from_slice(&(body.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&body);
        bytes
    }

    fn inline_frame(format: &str, args: &[u64]) -> Vec<u8> {
        let mut text = format.as_bytes().to_vec();
        text.push(0);
        text.resize(text.len().next_multiple_of(8), 0);
        let size = 4 + text.len() + 8 * args.len();
        let mut frame = ((size as u32) << 2).to_le_bytes().to_vec();
        frame.extend_from_slice(&text);
        args.iter()
            .for_each(|a| frame.extend_from_slice(&a.to_le_bytes()));
        frame
    }

    #[test]
    fn inline_and_constant_frames_decode_in_buffer_order() {
        let mut constant = ((4 + 8 + 8u32) << 2 | 2).to_le_bytes().to_vec();
        constant.extend_from_slice(&0x1234_abcdu64.to_le_bytes());
        constant.extend_from_slice(&(-3i64 as u64).to_le_bytes());
        let formats = vec!["0:0:1234abcd,n = %d\n".to_string()];
        let bytes = buffer(&[inline_frame("%u + %u\n", &[1, 2]), constant]);
        let out = decode(&bytes, &formats);
        assert_eq!(out.text, "1 + 2\nn = -3\n");
        assert_eq!((out.frames, out.dropped, out.corrupt), (2, false, None));
    }

    #[test]
    fn the_dropped_line_is_reported() {
        let out = decode(
            &buffer(&[inline_frame("a\n", &[]), inline_frame(DROPPED_LINE, &[])]),
            &[],
        );
        assert_eq!(out.text, format!("a\n{DROPPED_LINE}"));
        assert!(out.dropped);
    }

    #[test]
    fn malformed_frames_stop_decoding_and_keep_what_came_before() {
        let mut bytes = buffer(&[inline_frame("ok\n", &[]), inline_frame("x %d\n", &[5])]);
        let second = HEADER_BYTES + inline_frame("ok\n", &[]).len();
        bytes[second..second + 4].copy_from_slice(&(4000u32 << 2).to_le_bytes());
        let out = decode(&bytes, &[]);
        assert_eq!(out.text, "ok\n");
        assert!(out.corrupt.unwrap().contains("4000 bytes"));
        let unknown = {
            let mut f = ((4 + 8u32) << 2 | 2).to_le_bytes().to_vec();
            f.extend_from_slice(&7u64.to_le_bytes());
            f
        };
        assert!(
            decode(&buffer(&[unknown]), &[])
                .corrupt
                .unwrap()
                .contains("hash 7")
        );
        assert!(decode(&[1, 2], &[]).corrupt.unwrap().contains("no header"));
        assert_eq!(
            decode(&PrintBuffer::header(64), &[]),
            PrintOutput::default()
        );
    }

    #[test]
    fn the_header_says_how_much_to_read_back() {
        let mut header = PrintBuffer::header(1024);
        assert_eq!(u32::from_le_bytes(header[4..].try_into().unwrap()), 1016);
        assert_eq!(PrintBuffer::used(&header), 8);
        header[..4].copy_from_slice(&100u32.to_le_bytes());
        assert_eq!(PrintBuffer::used(&header), 108);
        header[..4].copy_from_slice(&5000u32.to_le_bytes());
        assert_eq!(PrintBuffer::used(&header), 1024);
    }
}
