//! Parsing of `cargo xtask emu run`'s geometry and argument specs.

use anyhow::{Context, Result, bail};
use std::path::PathBuf;

/// One `--arg` of `cargo xtask emu run`, in the order of the kernel's explicit arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// `buf:<PATH>`: a device buffer holding the file's bytes; the kernel gets its address.
    Buffer(PathBuf),
    /// `u32:<N>`.
    U32(u32),
    /// `i32:<N>`.
    I32(i32),
    /// `u64:<N>`.
    U64(u64),
    /// `i64:<N>`.
    I64(i64),
    /// `f32:<X>`.
    F32(f32),
    /// `f64:<X>`.
    F64(f64),
}

impl ArgSpec {
    /// Parses `kind:value`.
    pub fn parse(text: &str) -> Result<ArgSpec> {
        let (kind, value) = text.split_once(':').with_context(|| {
            format!("argument `{text}` has no kind: write buf:<PATH>, u32:<N>, i32:<N>, u64:<N>, i64:<N>, f32:<X> or f64:<X>")
        })?;
        let bad = || format!("argument `{text}`: `{value}` is not a valid {kind}");
        Ok(match kind {
            "buf" => {
                if value.is_empty() {
                    bail!("argument `{text}` names no file");
                }
                ArgSpec::Buffer(PathBuf::from(value))
            }
            "u32" => ArgSpec::U32(parse_int(value).with_context(bad)?),
            "i32" => ArgSpec::I32(parse_int(value).with_context(bad)?),
            "u64" => ArgSpec::U64(parse_int(value).with_context(bad)?),
            "i64" => ArgSpec::I64(parse_int(value).with_context(bad)?),
            "f32" => ArgSpec::F32(value.parse().with_context(bad)?),
            "f64" => ArgSpec::F64(value.parse().with_context(bad)?),
            other => bail!(
                "argument `{text}`: unknown kind `{other}`: use buf, u32, i32, u64, i64, f32 or f64"
            ),
        })
    }

    /// The value's bytes as the kernel receives them (little-endian), or `None` for a buffer.
    pub fn value_bytes(&self) -> Option<Vec<u8>> {
        Some(match self {
            ArgSpec::Buffer(_) => return None,
            ArgSpec::U32(v) => v.to_le_bytes().to_vec(),
            ArgSpec::I32(v) => v.to_le_bytes().to_vec(),
            ArgSpec::U64(v) => v.to_le_bytes().to_vec(),
            ArgSpec::I64(v) => v.to_le_bytes().to_vec(),
            ArgSpec::F32(v) => v.to_le_bytes().to_vec(),
            ArgSpec::F64(v) => v.to_le_bytes().to_vec(),
        })
    }
}

/// Parses a decimal or `0x` hexadecimal integer.
fn parse_int<T>(text: &str) -> Result<T>
where
    T: TryFrom<i128>,
{
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i128::from_str_radix(hex, 16)?,
        None => digits.parse::<i128>()?,
    };
    let value = if negative { -magnitude } else { magnitude };
    T::try_from(value).map_err(|_| anyhow::anyhow!("{text} is out of range"))
}

/// Parses `X[,Y[,Z]]` into three dimensions (missing ones are 1); each must be at least 1.
pub fn parse_dims(text: &str, what: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("--{what} `{text}`: expected X, X,Y or X,Y,Z");
    }
    let mut dims = [1u32; 3];
    for (dim, part) in dims.iter_mut().zip(&parts) {
        *dim = parse_int(part)
            .with_context(|| format!("--{what} `{text}`: `{part}` is not a count"))?;
        if *dim == 0 {
            bail!("--{what} `{text}`: every dimension must be at least 1");
        }
    }
    Ok(dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind() {
        assert_eq!(ArgSpec::parse("u32:7").unwrap(), ArgSpec::U32(7));
        assert_eq!(ArgSpec::parse("u32:0x10").unwrap(), ArgSpec::U32(16));
        assert_eq!(ArgSpec::parse("i32:-5").unwrap(), ArgSpec::I32(-5));
        assert_eq!(
            ArgSpec::parse("u64:18446744073709551615").unwrap(),
            ArgSpec::U64(u64::MAX)
        );
        assert_eq!(ArgSpec::parse("i64:-9").unwrap(), ArgSpec::I64(-9));
        assert_eq!(ArgSpec::parse("f32:1.5").unwrap(), ArgSpec::F32(1.5));
        assert_eq!(ArgSpec::parse("f64:-2e3").unwrap(), ArgSpec::F64(-2000.0));
        assert_eq!(
            ArgSpec::parse("buf:a/b.bin").unwrap(),
            ArgSpec::Buffer("a/b.bin".into())
        );
        assert_eq!(
            ArgSpec::parse("i32:-5").unwrap().value_bytes().unwrap(),
            (-5i32).to_le_bytes()
        );
    }

    #[test]
    fn rejects_bad_specs_with_the_reason() {
        for (spec, needle) in [
            ("7", "has no kind"),
            ("u16:7", "unknown kind `u16`"),
            ("u32:-1", "not a valid u32"),
            ("u32:4294967296", "not a valid u32"),
            ("i32:x", "not a valid i32"),
            ("f32:", "not a valid f32"),
            ("buf:", "names no file"),
        ] {
            let e = format!("{:#}", ArgSpec::parse(spec).unwrap_err());
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }

    #[test]
    fn dims_default_to_one_and_reject_zero() {
        assert_eq!(parse_dims("4", "grid").unwrap(), [4, 1, 1]);
        assert_eq!(parse_dims("4,2", "grid").unwrap(), [4, 2, 1]);
        assert_eq!(parse_dims("4,2,3", "grid").unwrap(), [4, 2, 3]);
        assert!(parse_dims("0", "grid").is_err());
        assert!(parse_dims("1,2,3,4", "grid").is_err());
        assert!(parse_dims("a", "block").is_err());
    }
}
