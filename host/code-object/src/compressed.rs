//! Compressed clang offload bundles (`CCOB`), as written by `clang-offload-bundler -compress`.
//!
//! Header layout (LLVM `llvm/Object/OffloadBundle.h`, `CompressedOffloadBundle`), all fields
//! little-endian:
//!
//! | version | magic | version | method | total size | uncompressed size | hash |
//! | ------- | ----- | ------- | ------ | ---------- | ----------------- | ---- |
//! | 1       | 4     | u16     | u16    | -          | u32               | u64  |
//! | 2       | 4     | u16     | u16    | u32        | u32               | u64  |
//! | 3       | 4     | u16     | u16    | u64        | u64               | u64  |
//!
//! The method is `llvm::compression::Format`: 0 = zlib (RFC 1950 stream), 1 = zstd. The total
//! size counts the header; the compressed data follows the header up to it (version 1: to the
//! end of the input). The hash is the low 64 bits of the MD5 of the uncompressed bundle; it is
//! reported, not checked: the decompressed size and the inner bundle's own checks catch
//! corruption.

use std::io::Read;

use super::error::{CodeObjectError, Result};

/// Magic of a compressed bundle.
pub const COMPRESSED_BUNDLE_MAGIC: &[u8; 4] = b"CCOB";
/// Largest uncompressed size accepted, so that a forged header cannot make the reader
/// allocate without bound.
pub const MAX_UNCOMPRESSED_SIZE: u64 = 1 << 30;

/// Compression method of a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionMethod {
    /// zlib (method 0).
    Zlib,
    /// Zstandard (method 1).
    Zstd,
}

/// The decoded header of a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressedHeader {
    /// Header format version, 1 to 3.
    pub version: u16,
    /// Compression method.
    pub method: CompressionMethod,
    /// Total size including the header (versions 2 and 3).
    pub total_size: Option<u64>,
    /// Size of the bundle once decompressed.
    pub uncompressed_size: u64,
    /// Truncated MD5 of the uncompressed bundle.
    pub hash: u64,
    /// Header length in bytes.
    pub header_len: usize,
}

fn field(bytes: &[u8], at: usize, len: usize) -> Result<u64> {
    let slice = bytes.get(at..at + len).ok_or(CodeObjectError::Truncated {
        what: "compressed bundle header",
        needed: (at + len) as u64,
        available: bytes.len() as u64,
    })?;
    let mut word = [0u8; 8];
    word[..len].copy_from_slice(slice);
    Ok(u64::from_le_bytes(word))
}

/// Decodes the header of a compressed bundle (the input must start with `CCOB`).
pub fn parse_header(bytes: &[u8]) -> Result<CompressedHeader> {
    if !bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        return Err(CodeObjectError::NotBundle);
    }
    let version = field(bytes, 4, 2)? as u16;
    let method = match field(bytes, 6, 2)? as u16 {
        0 => CompressionMethod::Zlib,
        1 => CompressionMethod::Zstd,
        other => return Err(CodeObjectError::UnknownCompression(other)),
    };
    let (total_size, uncompressed_size, hash, header_len) = match version {
        1 => (None, field(bytes, 8, 4)?, field(bytes, 12, 8)?, 20),
        2 => (
            Some(field(bytes, 8, 4)?),
            field(bytes, 12, 4)?,
            field(bytes, 16, 8)?,
            24,
        ),
        3 => (
            Some(field(bytes, 8, 8)?),
            field(bytes, 16, 8)?,
            field(bytes, 24, 8)?,
            32,
        ),
        other => return Err(CodeObjectError::UnsupportedBundleVersion(other)),
    };
    Ok(CompressedHeader {
        version,
        method,
        total_size,
        uncompressed_size,
        hash,
        header_len,
    })
}

/// Decompresses a `CCOB` bundle into the uncompressed bundle it holds.
pub fn decompress(bytes: &[u8]) -> Result<Vec<u8>> {
    let header = parse_header(bytes)?;
    let end = match header.total_size {
        None => bytes.len(),
        Some(total) => {
            if total > bytes.len() as u64 {
                return Err(CodeObjectError::Truncated {
                    what: "compressed bundle",
                    needed: total,
                    available: bytes.len() as u64,
                });
            }
            let total = total as usize;
            if total < header.header_len {
                return Err(CodeObjectError::Decompression(format!(
                    "total size {total} is smaller than the {}-byte header",
                    header.header_len
                )));
            }
            total
        }
    };
    if header.uncompressed_size > MAX_UNCOMPRESSED_SIZE {
        return Err(CodeObjectError::Decompression(format!(
            "declares {} uncompressed bytes, more than the {MAX_UNCOMPRESSED_SIZE}-byte limit",
            header.uncompressed_size
        )));
    }
    let payload = &bytes[header.header_len..end];
    let limit = header.uncompressed_size + 1;
    let mut out = Vec::new();
    let read = match header.method {
        CompressionMethod::Zlib => flate2::read::ZlibDecoder::new(payload)
            .take(limit)
            .read_to_end(&mut out),
        CompressionMethod::Zstd => {
            let decoder = ruzstd::decoding::StreamingDecoder::new(payload)
                .map_err(|e| CodeObjectError::Decompression(format!("zstd: {e}")))?;
            decoder.take(limit).read_to_end(&mut out)
        }
    };
    read.map_err(|e| CodeObjectError::Decompression(e.to_string()))?;
    if out.len() as u64 != header.uncompressed_size {
        return Err(CodeObjectError::Decompression(format!(
            "decompressed to {} bytes, header says {}",
            out.len(),
            header.uncompressed_size
        )));
    }
    Ok(out)
}
