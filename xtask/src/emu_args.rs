//! Parsing of `cargo xtask emu run`'s geometry and argument specs.

use anyhow::{Context, Result, bail};
use iron::code_object::{ArgValueKind, KernelArg, KernelMetadata};
use std::path::{Path, PathBuf};

/// The kinds `--arg` accepts, for messages.
const KINDS: &str = "buf:<PATH>, ptr:<PATH>, u8:<N>, i8:<N>, u16:<N>, i16:<N>, u32:<N>, i32:<N>, \
                     u64:<N>, i64:<N>, bool:<B>, f32:<X>, f64:<X> or bytes:<HEX>";

/// One `--arg` of `cargo xtask emu run`, in the order of the kernel's explicit arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// `buf:<PATH>`: a device buffer holding the file's bytes; the kernel gets its address as a
    /// pointer (a `global_buffer` argument).
    Buffer(PathBuf),
    /// `ptr:<PATH>`: a device buffer holding the file's bytes whose address the kernel gets as
    /// an 8-byte integer (a `by_value` `intptr_t`, `uintptr_t` or `size_t` it casts back).
    Address(PathBuf),
    /// `u8:<N>` (`unsigned char`).
    U8(u8),
    /// `i8:<N>` (`char`, `signed char`).
    I8(i8),
    /// `u16:<N>` (`unsigned short`).
    U16(u16),
    /// `i16:<N>` (`short`).
    I16(i16),
    /// `u32:<N>`.
    U32(u32),
    /// `i32:<N>`.
    I32(i32),
    /// `u64:<N>`.
    U64(u64),
    /// `i64:<N>`.
    I64(i64),
    /// `bool:<true|false|1|0>`: one byte, 1 or 0.
    Bool(bool),
    /// `f32:<X>`.
    F32(f32),
    /// `f64:<X>`.
    F64(f64),
    /// `bytes:<HEX>`: raw bytes in memory order, two hex digits each (a struct passed by value,
    /// padding included).
    Bytes(Vec<u8>),
}

impl ArgSpec {
    /// Parses `kind:value`.
    pub fn parse(text: &str) -> Result<ArgSpec> {
        let (kind, value) = text
            .split_once(':')
            .with_context(|| format!("argument `{text}` has no kind: write {KINDS}"))?;
        let bad = || format!("argument `{text}`: `{value}` is not a valid {kind}");
        let path = |value: &str| {
            if value.is_empty() {
                bail!("argument `{text}` names no file");
            }
            Ok(PathBuf::from(value))
        };
        Ok(match kind {
            "buf" => ArgSpec::Buffer(path(value)?),
            "ptr" => ArgSpec::Address(path(value)?),
            "u8" => ArgSpec::U8(parse_int(value).with_context(bad)?),
            "i8" => ArgSpec::I8(parse_int(value).with_context(bad)?),
            "u16" => ArgSpec::U16(parse_int(value).with_context(bad)?),
            "i16" => ArgSpec::I16(parse_int(value).with_context(bad)?),
            "u32" => ArgSpec::U32(parse_int(value).with_context(bad)?),
            "i32" => ArgSpec::I32(parse_int(value).with_context(bad)?),
            "u64" => ArgSpec::U64(parse_int(value).with_context(bad)?),
            "i64" => ArgSpec::I64(parse_int(value).with_context(bad)?),
            "bool" => ArgSpec::Bool(match value {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => bail!("argument `{text}`: `{value}` is not a bool: write true, false, 1 or 0"),
            }),
            "f32" => ArgSpec::F32(value.parse().with_context(bad)?),
            "f64" => ArgSpec::F64(value.parse().with_context(bad)?),
            "bytes" => {
                ArgSpec::Bytes(parse_hex(value).with_context(|| format!("argument `{text}`"))?)
            }
            other => bail!("argument `{text}`: unknown kind `{other}`: write {KINDS}"),
        })
    }

    /// The value's bytes as the kernel receives them (little-endian), or `None` for a buffer
    /// (`buf:` or `ptr:`), whose address is known only once it is allocated.
    pub fn value_bytes(&self) -> Option<Vec<u8>> {
        Some(match self {
            ArgSpec::Buffer(_) | ArgSpec::Address(_) => return None,
            ArgSpec::U8(v) => v.to_le_bytes().to_vec(),
            ArgSpec::I8(v) => v.to_le_bytes().to_vec(),
            ArgSpec::U16(v) => v.to_le_bytes().to_vec(),
            ArgSpec::I16(v) => v.to_le_bytes().to_vec(),
            ArgSpec::U32(v) => v.to_le_bytes().to_vec(),
            ArgSpec::I32(v) => v.to_le_bytes().to_vec(),
            ArgSpec::U64(v) => v.to_le_bytes().to_vec(),
            ArgSpec::I64(v) => v.to_le_bytes().to_vec(),
            ArgSpec::Bool(v) => vec![u8::from(*v)],
            ArgSpec::F32(v) => v.to_le_bytes().to_vec(),
            ArgSpec::F64(v) => v.to_le_bytes().to_vec(),
            ArgSpec::Bytes(v) => v.clone(),
        })
    }

    /// The file a `buf:` or `ptr:` argument loads into a device buffer.
    pub fn file(&self) -> Option<&Path> {
        match self {
            ArgSpec::Buffer(path) | ArgSpec::Address(path) => Some(path),
            _ => None,
        }
    }

    /// Bytes the argument occupies in the kernarg segment.
    fn size(&self) -> usize {
        match self {
            ArgSpec::Buffer(_) | ArgSpec::Address(_) => 8,
            other => other.value_bytes().map_or(0, |bytes| bytes.len()),
        }
    }

    /// The metadata kind the argument must meet.
    fn value_kind(&self) -> ArgValueKind {
        match self {
            ArgSpec::Buffer(_) => ArgValueKind::GlobalBuffer,
            _ => ArgValueKind::ByValue,
        }
    }
}

/// Makes the path of a `buf:` or `ptr:` argument relative to `dir` (the directory the command
/// was started in); other arguments stay as they are.
pub fn resolve_path(arg: &str, dir: &Path) -> String {
    for prefix in ["buf:", "ptr:"] {
        if let Some(path) = arg.strip_prefix(prefix)
            && !path.is_empty()
        {
            return format!("{prefix}{}", dir.join(path).display());
        }
    }
    arg.to_string()
}

/// Checks the `--arg`s (`texts`, parsed into `specs`) against the kernel's explicit arguments:
/// as many, each of the kind (`global_buffer` for `buf:`, `by_value` for the rest) and the size
/// the metadata gives, and says which argument to change and how.
pub fn check_args(metadata: &KernelMetadata, texts: &[String], specs: &[ArgSpec]) -> Result<()> {
    let explicit: Vec<&KernelArg> = metadata.explicit_args().collect();
    let kernel = &metadata.name;
    if explicit.len() != specs.len() {
        let wanted: Vec<String> = explicit.iter().map(|arg| describe(arg)).collect();
        bail!(
            "kernel {kernel} takes {} arguments, got {} --arg: it takes {}",
            explicit.len(),
            specs.len(),
            if wanted.is_empty() {
                "none".to_string()
            } else {
                wanted.join(", ")
            }
        );
    }
    for (i, ((meta, spec), text)) in explicit.iter().zip(specs).zip(texts).enumerate() {
        let position = i + 1;
        let name = meta
            .name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let which = format!("--arg {position} `{text}`: argument {position}{name} of {kernel}");
        match (&meta.value_kind, spec.value_kind()) {
            (ArgValueKind::GlobalBuffer, ArgValueKind::GlobalBuffer) => {}
            (ArgValueKind::GlobalBuffer, _) => {
                bail!("{which} is a pointer (global_buffer): pass buf:<PATH>")
            }
            (ArgValueKind::ByValue, ArgValueKind::GlobalBuffer) => bail!(
                "{which} is a by_value argument of {}, not a pointer: pass {}",
                bytes_text(meta.size),
                value_kinds_of_size(meta.size)
            ),
            (ArgValueKind::ByValue, _) => {}
            (other, _) => bail!(
                "{which} is of kind {}, which emu run cannot pass",
                other.as_str()
            ),
        }
        let got = spec.size();
        if got != meta.size as usize {
            let passes = match spec {
                ArgSpec::Bytes(_) => format!("the hex gives {}", bytes_text_usize(got)),
                _ => format!("{} passes {}", kind_of(text), bytes_text_usize(got)),
            };
            bail!(
                "{which} is {} (by_value), {passes}: pass {}",
                bytes_text(meta.size),
                value_kinds_of_size(meta.size)
            );
        }
    }
    Ok(())
}

/// An explicit argument as the count error lists it: `pointer` or `<N>-byte value`.
fn describe(arg: &KernelArg) -> String {
    match arg.value_kind {
        ArgValueKind::GlobalBuffer => "pointer".to_string(),
        ArgValueKind::ByValue => format!("{}-byte value", arg.size),
        ref other => other.as_str().to_string(),
    }
}

/// The `kind:` of an argument's text.
fn kind_of(text: &str) -> &str {
    text.split_once(':').map_or(text, |(kind, _)| kind)
}

fn bytes_text(size: u32) -> String {
    bytes_text_usize(size as usize)
}

fn bytes_text_usize(size: usize) -> String {
    if size == 1 {
        "1 byte".to_string()
    } else {
        format!("{size} bytes")
    }
}

/// The `--arg` kinds that fill a by_value argument of `size` bytes.
fn value_kinds_of_size(size: u32) -> String {
    let bytes = format!("bytes:<{} hex digits>", 2 * u64::from(size));
    match size {
        1 => format!("u8:, i8:, bool: or {bytes}"),
        2 => format!("u16:, i16: or {bytes}"),
        4 => format!("u32:, i32:, f32: or {bytes}"),
        8 => format!("u64:, i64:, f64:, ptr:<PATH> (a buffer's address as an integer) or {bytes}"),
        _ => bytes,
    }
}

/// Parses hex digits, two per byte, in memory order.
fn parse_hex(text: &str) -> Result<Vec<u8>> {
    if text.is_empty() {
        bail!("no bytes: write two hex digits per byte, e.g. bytes:0a0b0c");
    }
    if let Some((at, c)) = text.char_indices().find(|(_, c)| !c.is_ascii_hexdigit()) {
        bail!("`{c}` at position {} is not a hex digit", at + 1);
    }
    if !text.len().is_multiple_of(2) {
        bail!(
            "{} hex digits: write two per byte (an even number)",
            text.len()
        );
    }
    Ok((0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("checked hex digits"))
        .collect())
}

/// An integer type `--arg` parses, with its range for messages.
trait Int: TryFrom<i128> {
    const MIN: i128;
    const MAX: i128;
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const MIN: i128 = <$t>::MIN as i128;
            const MAX: i128 = <$t>::MAX as i128;
        }
    )*};
}

ints!(u8, i8, u16, i16, u32, i32, u64, i64);

/// Parses a decimal or `0x` hexadecimal integer.
fn parse_int<T: Int>(text: &str) -> Result<T> {
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
    T::try_from(value)
        .map_err(|_| anyhow::anyhow!("{text} is out of range {}..={}", T::MIN, T::MAX))
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
            ("u128:7", "unknown kind `u128`"),
            ("u32:-1", "not a valid u32"),
            ("u32:4294967296", "not a valid u32"),
            ("i32:x", "not a valid i32"),
            ("f32:", "not a valid f32"),
            ("buf:", "names no file"),
            ("ptr:", "names no file"),
            ("i8:300", "300 is out of range -128..=127"),
            ("i8:-129", "out of range -128..=127"),
            ("u8:256", "256 is out of range 0..=255"),
            ("u8:-1", "not a valid u8"),
            ("i16:32768", "out of range -32768..=32767"),
            ("u16:65536", "out of range 0..=65535"),
            ("u16:0x1_0000", "not a valid u16"),
            ("bool:2", "not a bool: write true, false, 1 or 0"),
            ("bool:yes", "not a bool"),
            ("bool:", "not a bool"),
            ("bytes:", "no bytes"),
            ("bytes:0a0", "3 hex digits: write two per byte"),
            ("bytes:0g", "`g` at position 2 is not a hex digit"),
            ("bytes:0x0a", "`x` at position 2 is not a hex digit"),
            ("bytes:0a 0b", "` ` at position 3"),
        ] {
            let e = format!("{:#}", ArgSpec::parse(spec).unwrap_err());
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }

    #[test]
    fn parses_small_integers_bools_pointers_and_bytes_at_their_edges() {
        for (spec, want, bytes) in [
            ("i8:-128", ArgSpec::I8(i8::MIN), vec![0x80]),
            ("i8:127", ArgSpec::I8(i8::MAX), vec![0x7f]),
            ("i8:-0x80", ArgSpec::I8(i8::MIN), vec![0x80]),
            ("u8:255", ArgSpec::U8(u8::MAX), vec![0xff]),
            ("u8:0", ArgSpec::U8(0), vec![0]),
            ("i16:-32768", ArgSpec::I16(i16::MIN), vec![0x00, 0x80]),
            ("u16:65535", ArgSpec::U16(u16::MAX), vec![0xff, 0xff]),
            ("u16:0xFFFF", ArgSpec::U16(u16::MAX), vec![0xff, 0xff]),
            ("bool:true", ArgSpec::Bool(true), vec![1]),
            ("bool:1", ArgSpec::Bool(true), vec![1]),
            ("bool:false", ArgSpec::Bool(false), vec![0]),
            ("bool:0", ArgSpec::Bool(false), vec![0]),
            ("bytes:0a", ArgSpec::Bytes(vec![0x0a]), vec![0x0a]),
            (
                "bytes:0aFf7c",
                ArgSpec::Bytes(vec![0x0a, 0xff, 0x7c]),
                vec![0x0a, 0xff, 0x7c],
            ),
        ] {
            let parsed = ArgSpec::parse(spec).unwrap();
            assert_eq!(parsed, want, "{spec}");
            assert_eq!(parsed.value_bytes().unwrap(), bytes, "{spec}");
            assert_eq!(parsed.size(), bytes.len(), "{spec}");
        }
        let ptr = ArgSpec::parse("ptr:dir/t.bin").unwrap();
        assert_eq!(ptr, ArgSpec::Address("dir/t.bin".into()));
        assert_eq!(ptr.value_bytes(), None);
        assert_eq!(ptr.file(), Some(Path::new("dir/t.bin")));
        assert_eq!(ptr.size(), 8);
        assert_eq!(ptr.value_kind(), ArgValueKind::ByValue);
        assert_eq!(
            ArgSpec::parse("buf:b").unwrap().value_kind(),
            ArgValueKind::GlobalBuffer
        );
        assert_eq!(ArgSpec::parse("u32:3").unwrap().file(), None);
    }

    #[test]
    fn random_bytes_round_trip_through_hex() {
        let mut state = 0x2545_f491u32;
        for len in 1..=40 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (state >> 24) as u8
                })
                .collect();
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let upper = hex.to_uppercase();
            for text in [hex, upper] {
                let parsed = ArgSpec::parse(&format!("bytes:{text}")).unwrap();
                assert_eq!(parsed.value_bytes().unwrap(), bytes, "{text}");
            }
        }
    }

    #[test]
    fn random_integers_round_trip_and_one_past_the_range_fails() {
        let mut state = 0x0bad_5eedu64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state
        };
        for _ in 0..200 {
            let r = next();
            let (a, b, c, d) = (r as i8, r as u8, (r >> 8) as i16, (r >> 24) as u16);
            assert_eq!(ArgSpec::parse(&format!("i8:{a}")).unwrap(), ArgSpec::I8(a));
            assert_eq!(
                ArgSpec::parse(&format!("u8:{b:#x}")).unwrap(),
                ArgSpec::U8(b)
            );
            assert_eq!(
                ArgSpec::parse(&format!("i16:{c}")).unwrap(),
                ArgSpec::I16(c)
            );
            assert_eq!(
                ArgSpec::parse(&format!("u16:{d}")).unwrap(),
                ArgSpec::U16(d)
            );
        }
        for spec in ["i8:128", "i8:-129", "u8:256", "i16:-32769", "u16:65536"] {
            assert!(ArgSpec::parse(spec).is_err(), "{spec}");
        }
    }

    #[test]
    fn buffer_paths_resolve_against_the_start_directory() {
        let dir = Path::new("/start");
        assert_eq!(resolve_path("buf:a.bin", dir), "buf:/start/a.bin");
        assert_eq!(resolve_path("ptr:d/t.bin", dir), "ptr:/start/d/t.bin");
        assert_eq!(resolve_path("ptr:/abs.bin", dir), "ptr:/abs.bin");
        assert_eq!(resolve_path("ptr:", dir), "ptr:");
        assert_eq!(resolve_path("bytes:0a", dir), "bytes:0a");
        assert_eq!(resolve_path("u8:1", dir), "u8:1");
    }

    /// hip_args.hip's `args_structs`: (short, S24, bool, S12, S3, long long*, char), plus a
    /// hidden argument.
    fn structs_metadata() -> KernelMetadata {
        let arg = |offset, size, value_kind, name: Option<&str>| KernelArg {
            name: name.map(str::to_string),
            ..KernelArg::new(offset, size, value_kind)
        };
        let args = vec![
            arg(0, 2, ArgValueKind::ByValue, Some("a")),
            arg(8, 24, ArgValueKind::ByValue, Some("s")),
            arg(32, 1, ArgValueKind::ByValue, None),
            arg(36, 12, ArgValueKind::ByValue, None),
            arg(48, 3, ArgValueKind::ByValue, None),
            arg(56, 8, ArgValueKind::GlobalBuffer, Some("out")),
            arg(64, 1, ArgValueKind::ByValue, None),
            arg(72, 4, ArgValueKind::HiddenBlockCountX, None),
        ];
        KernelMetadata::new("args_structs", args, 80)
    }

    fn check(texts: &[&str]) -> Result<()> {
        let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let specs: Vec<ArgSpec> = texts.iter().map(|t| ArgSpec::parse(t).unwrap()).collect();
        check_args(&structs_metadata(), &texts, &specs)
    }

    #[test]
    fn arguments_are_checked_against_the_metadata() {
        let s24 = format!("bytes:{}", "ab".repeat(24));
        let s12 = format!("bytes:{}", "cd".repeat(12));
        let good = [
            "i16:-32768",
            s24.as_str(),
            "bool:true",
            s12.as_str(),
            "bytes:01ff00",
            "buf:out.bin",
            "i8:-128",
        ];
        check(&good).unwrap();
        let with = |i: usize, text: &str| {
            let mut args = good.to_vec();
            args[i] = text;
            format!("{:#}", check(&args).unwrap_err())
        };
        for (i, text, needles) in [
            (
                0,
                "u32:7",
                &[
                    "--arg 1 `u32:7`: argument 1 (a) of args_structs is 2 bytes (by_value), u32 passes 4 bytes: pass u16:, i16: or bytes:<4 hex digits>",
                ][..],
            ),
            (
                1,
                "bytes:0a0b",
                &[
                    "--arg 2 `bytes:0a0b`: argument 2 (s) of args_structs is 24 bytes (by_value), the hex gives 2 bytes: pass bytes:<48 hex digits>",
                ],
            ),
            (
                2,
                "u16:1",
                &[
                    "argument 3 of args_structs is 1 byte (by_value), u16 passes 2 bytes: pass u8:, i8:, bool: or bytes:<2 hex digits>",
                ],
            ),
            (
                4,
                "bytes:0102",
                &["argument 5 of args_structs is 3 bytes (by_value), the hex gives 2 bytes"],
            ),
            (
                4,
                "buf:x.bin",
                &["argument 5 of args_structs is a by_value argument of 3 bytes, not a pointer"],
            ),
            (
                5,
                "u64:4096",
                &[
                    "--arg 6 `u64:4096`: argument 6 (out) of args_structs is a pointer (global_buffer): pass buf:<PATH>",
                ],
            ),
            (
                5,
                "ptr:out.bin",
                &["argument 6 (out) of args_structs is a pointer (global_buffer): pass buf:<PATH>"],
            ),
            (
                6,
                "ptr:x.bin",
                &["argument 7 of args_structs is 1 byte (by_value), ptr passes 8 bytes"],
            ),
        ] {
            let e = with(i, text);
            for needle in needles {
                assert!(e.contains(needle), "{text}: {e}");
            }
            assert!(!e.contains('\n'), "{e}");
        }
        let e = format!("{:#}", check(&good[..6]).unwrap_err());
        assert!(
            e.contains("kernel args_structs takes 7 arguments, got 6 --arg: it takes 2-byte value, 24-byte value, 1-byte value, 12-byte value, 3-byte value, pointer, 1-byte value"),
            "{e}"
        );
        let mut more = good.to_vec();
        more.push("u8:1");
        let e = format!("{:#}", check(&more).unwrap_err());
        assert!(e.contains("takes 7 arguments, got 8 --arg"), "{e}");
    }

    #[test]
    fn an_eight_byte_value_suggests_a_pointer_passed_as_an_integer() {
        let mut metadata = structs_metadata();
        metadata.args.truncate(1);
        metadata.args[0].size = 8;
        let texts = vec!["buf:t.bin".to_string()];
        let specs = vec![ArgSpec::parse(&texts[0]).unwrap()];
        let e = format!("{:#}", check_args(&metadata, &texts, &specs).unwrap_err());
        assert!(
            e.contains("is a by_value argument of 8 bytes, not a pointer: pass u64:, i64:, f64:, ptr:<PATH>"),
            "{e}"
        );
        let texts = vec!["ptr:t.bin".to_string()];
        let specs = vec![ArgSpec::parse(&texts[0]).unwrap()];
        check_args(&metadata, &texts, &specs).unwrap();
        metadata.args.clear();
        let e = format!("{:#}", check_args(&metadata, &texts, &specs).unwrap_err());
        assert!(
            e.contains("takes 0 arguments, got 1 --arg: it takes none"),
            "{e}"
        );
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
