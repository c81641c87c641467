//! Rendering one printf frame: a C format string and its arguments as the HIP runtime's
//! buffered printf stores them (every number in an 8-byte slot, floats as f64, strings inline
//! with their NUL, padded to 8 bytes).
//!
//! The output is what the HIP runtime prints for the frame, which hands each conversion to the
//! C library's `printf` with the slot read as 64 bits: glibc's rendering of `d i u x X o c s p
//! f F e E g G` with the flags `- + space # 0`, a width and a precision (`*` is not supported
//! and prints the conversion as text). Length modifiers are read and ignored.

/// A conversion with its flags, width and precision.
#[derive(Default, Clone, Copy)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

/// Where [`render_with`] takes each conversion's argument from, in order.
pub trait Arguments {
    /// The next number or pointer, as its 64-bit slot (a float's f64 bits).
    fn number(&mut self) -> Result<u64, String>;
    /// The next string.
    fn string(&mut self) -> Result<String, String>;
}

/// A printf frame's argument bytes: 8-byte slots, strings inline with their NUL.
struct Inline<'a>(&'a [u8]);

impl Arguments for Inline<'_> {
    fn number(&mut self) -> Result<u64, String> {
        slot(&mut self.0)
    }

    fn string(&mut self) -> Result<String, String> {
        string(&mut self.0)
    }
}

/// Renders `format` with the argument bytes `args`. Returns the text, or what is wrong when
/// the arguments run out or a string has no NUL.
pub fn render(format: &[u8], args: &[u8]) -> Result<String, String> {
    render_with(format, &mut Inline(args))
}

/// Renders `format` with the arguments `args` gives (a frame's bytes for [`render`], a
/// device panic's record for `device_panic`). Returns the text, or what `args` found wrong.
pub fn render_with(format: &[u8], args: &mut impl Arguments) -> Result<String, String> {
    let mut out = String::new();
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' {
            let next = format[i..]
                .iter()
                .position(|&b| b == b'%')
                .map_or(format.len(), |p| i + p);
            out.push_str(&String::from_utf8_lossy(&format[i..next]));
            i = next;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec::default();
        while let Some(&flag) = format.get(i) {
            match flag {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alternate = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        let (width, next) = digits(format, i);
        spec.width = width.unwrap_or(0);
        i = next;
        if format.get(i) == Some(&b'.') {
            let (precision, next) = digits(format, i + 1);
            spec.precision = Some(precision.unwrap_or(0));
            i = next;
        }
        while matches!(
            format.get(i),
            Some(b'h' | b'l' | b'L' | b'q' | b'j' | b'z' | b't')
        ) {
            i += 1;
        }
        let Some(&conversion) = format.get(i) else {
            out.push_str(&String::from_utf8_lossy(&format[start..]));
            break;
        };
        i += 1;
        let text = match conversion {
            b'%' => "%".to_string(),
            b'd' | b'i' => signed(args.number()? as i64, spec),
            b'u' | b'x' | b'X' | b'o' => unsigned(args.number()?, conversion, spec),
            b'c' => pad(char::from(args.number()? as u8).to_string(), spec, false),
            b'p' => pointer(args.number()?, spec),
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                float(f64::from_bits(args.number()?), conversion, spec)
            }
            b's' => {
                let text = args.string()?;
                let text = match spec.precision {
                    Some(p) => text.chars().take(p).collect(),
                    None => text,
                };
                pad(text, spec, false)
            }
            _ => String::from_utf8_lossy(&format[start..i]).into_owned(),
        };
        out.push_str(&text);
    }
    Ok(out)
}

/// A run of decimal digits at `at`: its value (if any digits) and the index after it.
fn digits(format: &[u8], at: usize) -> (Option<usize>, usize) {
    let end = format[at..]
        .iter()
        .position(|b| !b.is_ascii_digit())
        .map_or(format.len(), |p| at + p);
    let value = std::str::from_utf8(&format[at..end])
        .ok()
        .and_then(|d| d.parse().ok());
    (value, end)
}

/// The next 8-byte slot.
fn slot(rest: &mut &[u8]) -> Result<u64, String> {
    let Some((head, tail)) = rest.split_first_chunk::<8>() else {
        return Err("the frame has fewer arguments than its format".into());
    };
    *rest = tail;
    Ok(u64::from_le_bytes(*head))
}

/// The next inline string: up to its NUL, which with its padding takes a multiple of 8 bytes.
fn string(rest: &mut &[u8]) -> Result<String, String> {
    let nul = rest
        .iter()
        .position(|&b| b == 0)
        .ok_or("a string argument has no NUL")?;
    let text = String::from_utf8_lossy(&rest[..nul]).into_owned();
    *rest = &rest[((nul + 1).next_multiple_of(8)).min(rest.len())..];
    Ok(text)
}

/// Pads `body` to the width; `numeric`: zero padding goes after a sign or `0x` prefix.
fn pad(body: String, spec: Spec, numeric: bool) -> String {
    let len = body.chars().count();
    if len >= spec.width {
        return body;
    }
    let fill = spec.width - len;
    if spec.left {
        return body + &" ".repeat(fill);
    }
    if spec.zero && numeric {
        let prefix_len = body
            .find(|c: char| c.is_ascii_digit())
            .map(|p| {
                if body[p..].starts_with("0x") || body[p..].starts_with("0X") {
                    p + 2
                } else {
                    p
                }
            })
            .unwrap_or(0);
        let (prefix, digits) = body.split_at(prefix_len);
        return format!("{prefix}{}{digits}", "0".repeat(fill));
    }
    " ".repeat(fill) + &body
}

/// The sign a non-negative number gets from the `+` and space flags.
fn positive_sign(spec: Spec) -> &'static str {
    if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

/// Digits of an integer with the precision's minimum count (none for 0 with precision 0).
fn with_precision(digits: String, spec: Spec) -> String {
    match spec.precision {
        Some(0) if digits == "0" => String::new(),
        Some(p) if digits.len() < p => "0".repeat(p - digits.len()) + &digits,
        _ => digits,
    }
}

fn signed(value: i64, spec: Spec) -> String {
    let sign = if value < 0 { "-" } else { positive_sign(spec) };
    let digits = with_precision(value.unsigned_abs().to_string(), spec);
    let spec = Spec {
        zero: spec.zero && spec.precision.is_none(),
        ..spec
    };
    pad(format!("{sign}{digits}"), spec, true)
}

fn unsigned(value: u64, conversion: u8, spec: Spec) -> String {
    let digits = match conversion {
        b'x' => format!("{value:x}"),
        b'X' => format!("{value:X}"),
        b'o' => format!("{value:o}"),
        _ => value.to_string(),
    };
    let mut digits = with_precision(digits, spec);
    if spec.alternate {
        match conversion {
            b'o' if !digits.starts_with('0') => digits.insert(0, '0'),
            b'x' if value != 0 => digits.insert_str(0, "0x"),
            b'X' if value != 0 => digits.insert_str(0, "0X"),
            _ => {}
        }
    }
    let spec = Spec {
        zero: spec.zero && spec.precision.is_none(),
        ..spec
    };
    pad(digits, spec, true)
}

fn pointer(value: u64, spec: Spec) -> String {
    let text = if value == 0 {
        "(nil)".to_string()
    } else {
        format!("0x{value:x}")
    };
    pad(text, spec, value != 0)
}

fn float(value: f64, conversion: u8, spec: Spec) -> String {
    let upper = conversion.is_ascii_uppercase();
    let sign = if value.is_sign_negative() {
        "-"
    } else {
        positive_sign(spec)
    };
    if !value.is_finite() {
        let word = if value.is_nan() { "nan" } else { "inf" };
        let word = if upper {
            word.to_uppercase()
        } else {
            word.to_string()
        };
        return pad(format!("{sign}{word}"), spec, false);
    }
    let magnitude = value.abs();
    let precision = spec.precision.unwrap_or(6);
    let body = match conversion.to_ascii_lowercase() {
        b'f' => fixed(magnitude, precision, spec.alternate),
        b'e' => exponential(magnitude, precision, spec.alternate),
        b'g' => general(magnitude, precision, spec.alternate),
        _ => exponential(magnitude, spec.precision.unwrap_or(13), spec.alternate),
    };
    let body = if upper { body.to_uppercase() } else { body };
    pad(format!("{sign}{body}"), spec, true)
}

/// `%f` of a non-negative finite value.
fn fixed(value: f64, precision: usize, alternate: bool) -> String {
    let text = format!("{value:.precision$}");
    if alternate && precision == 0 {
        text + "."
    } else {
        text
    }
}

/// `%e` of a non-negative finite value: the exponent signed and at least two digits.
fn exponential(value: f64, precision: usize, alternate: bool) -> String {
    let text = format!("{value:.precision$e}");
    let (mantissa, exponent) = text.split_once('e').expect("Rust's {:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("Rust's exponent is an integer");
    let point = if alternate && precision == 0 { "." } else { "" };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}{point}e{sign}{:02}", exponent.unsigned_abs())
}

/// `%g` of a non-negative finite value: `%e` or `%f` by the exponent, trailing zeros removed
/// unless `#`.
fn general(value: f64, precision: usize, alternate: bool) -> String {
    let p = precision.max(1);
    let rounded = format!("{value:.prec$e}", prec = p - 1);
    let exponent: i64 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .expect("Rust's {:e} has an integer exponent");
    let text = if exponent < -4 || exponent >= p as i64 {
        exponential(value, p - 1, alternate)
    } else {
        fixed(value, (p as i64 - 1 - exponent) as usize, alternate)
    };
    if alternate {
        return text;
    }
    let (number, exponent) = match text.find('e') {
        Some(at) => text.split_at(at),
        None => (text.as_str(), ""),
    };
    let number = if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    };
    format!("{number}{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The argument bytes of slots and strings, as a frame stores them.
    #[derive(Clone, Copy)]
    enum Arg<'a> {
        Slot(u64),
        Str(&'a str),
    }

    fn frame(args: &[Arg<'_>]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for arg in args {
            match arg {
                Arg::Slot(v) => bytes.extend_from_slice(&v.to_le_bytes()),
                Arg::Str(s) => {
                    bytes.extend_from_slice(s.as_bytes());
                    bytes.push(0);
                    bytes.resize(bytes.len().next_multiple_of(8), 0);
                }
            }
        }
        bytes
    }

    fn r(format: &str, args: &[Arg<'_>]) -> String {
        render(format.as_bytes(), &frame(args)).unwrap()
    }

    fn f(v: f64) -> Arg<'static> {
        Arg::Slot(v.to_bits())
    }

    #[test]
    fn integers_render_as_glibc_does() {
        use Arg::Slot;
        assert_eq!(
            r("%d|%i|%u", &[Slot(-5i64 as u64), Slot(7), Slot(9)]),
            "-5|7|9"
        );
        assert_eq!(
            r("%5d|%-5d|%05d|%+d|% d", &[Slot(42); 5]),
            "   42|42   |00042|+42| 42"
        );
        assert_eq!(
            r("%05d|%+05d", &[Slot(-42i64 as u64), Slot(42)]),
            "-0042|+0042"
        );
        assert_eq!(
            r("%x|%X|%#x|%#X|%o|%#o", &[Slot(255); 6]),
            "ff|FF|0xff|0XFF|377|0377"
        );
        assert_eq!(
            r("%#x|%08x|%#010x", &[Slot(0), Slot(0xbeef), Slot(0xbeef)]),
            "0|0000beef|0x0000beef"
        );
        assert_eq!(
            r("%.3d|%.0d|%5.3d", &[Slot(7), Slot(0), Slot(7)]),
            "007||  007"
        );
        assert_eq!(
            r(
                "%ld %lu %llx",
                &[Slot(u64::MAX), Slot(u64::MAX), Slot(u64::MAX)]
            ),
            "-1 18446744073709551615 ffffffffffffffff"
        );
        assert_eq!(r("%c%c", &[Slot(b'o' as u64), Slot(b'k' as u64)]), "ok");
    }

    #[test]
    fn floats_render_as_glibc_does() {
        assert_eq!(
            r("%f|%.2f|%.0f|%#.0f", &[f(1.5), f(2.345), f(2.5), f(3.0)]),
            "1.500000|2.35|2|3."
        );
        assert_eq!(
            r("%e|%.2E|%e", &[f(123456.0), f(0.000123), f(0.0)]),
            "1.234560e+05|1.23E-04|0.000000e+00"
        );
        assert_eq!(r("%e", &[f(1e300)]), "1.000000e+300");
        assert_eq!(
            r("%g|%g|%g|%g", &[f(1.0), f(0.1), f(1e8), f(123456.0)]),
            "1|0.1|1e+08|123456"
        );
        assert_eq!(
            r(
                "%g|%g|%g|%G",
                &[f(1234567.0), f(0.0001), f(0.00001), f(1e-10)]
            ),
            "1.23457e+06|0.0001|1e-05|1E-10"
        );
        assert_eq!(
            r("%.3g|%#g|%g", &[f(3.24159), f(1.0), f(-0.0)]),
            "3.24|1.00000|-0"
        );
        assert_eq!(
            r(
                "%f|%f|%F|%5f|%+f",
                &[
                    f(f64::INFINITY),
                    f(-f64::INFINITY),
                    f(f64::NAN),
                    f(f64::NAN),
                    f(f64::INFINITY)
                ]
            ),
            "inf|-inf|NAN|  nan|+inf"
        );
        assert_eq!(
            r("%08.2f|%-8.2f|%+.1e", &[f(-3.24159), f(3.24159), f(5e-7)]),
            "-0003.24|3.24    |+5.0e-07"
        );
    }

    #[test]
    fn strings_pointers_and_percent_signs() {
        use Arg::{Slot, Str};
        assert_eq!(
            r(
                "[%s] [%8s] [%-8s] [%.2s]",
                &[Str("abcdefgh"), Str("ab"), Str("ab"), Str("abc")]
            ),
            "[abcdefgh] [      ab] [ab      ] [ab]"
        );
        assert_eq!(r("%s|%d", &[Str(""), Slot(3)]), "|3");
        assert_eq!(
            r("%p %p %18p", &[Slot(0x7f00_1000), Slot(0), Slot(0x10)]),
            "0x7f001000 (nil)               0x10"
        );
        assert_eq!(r("100%% %q", &[]), "100% %q");
        assert_eq!(r("tail %", &[]), "tail %");
    }

    unsafe extern "C" {
        /// The C library's, the oracle: the HIP runtime hands each conversion to it.
        fn snprintf(
            buffer: *mut std::ffi::c_char,
            size: usize,
            format: *const std::ffi::c_char,
            ...
        ) -> std::ffi::c_int;
    }

    /// glibc's rendering of one conversion of a 64-bit integer or a double.
    fn libc(format: &str, slot: u64, float: bool) -> String {
        let c_format = std::ffi::CString::new(format).unwrap();
        let mut buffer = vec![0u8; 1024];
        // SAFETY: the buffer's size is passed; the argument has the conversion's type.
        let len = unsafe {
            if float {
                snprintf(
                    buffer.as_mut_ptr().cast(),
                    1024,
                    c_format.as_ptr(),
                    f64::from_bits(slot),
                )
            } else {
                snprintf(buffer.as_mut_ptr().cast(), 1024, c_format.as_ptr(), slot)
            }
        };
        buffer.truncate(len as usize);
        String::from_utf8(buffer).unwrap()
    }

    #[test]
    fn random_values_render_as_the_c_library_renders_them() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xc_f0a7);
        let integers = [
            "%ld", "%5ld", "%-+7ld", "% ld", "%012ld", "%.4ld", "%lu", "%lx", "%#lX", "%#lo",
            "%-#18lx", "%020lu",
        ];
        // Not `%#g`: glibc renders it for a value that rounds up to a power of ten (999999.5)
        // as `1.e+06`, without the zeros `#` keeps, where C's rule and this renderer give
        // `1.00000e+06`.
        let floats = [
            "%f", "%.0f", "%.3f", "%#.0f", "%e", "%.0e", "%12.4e", "%E", "%g", "%.1g", "%.10g",
            "%G", "%+g", "% .3e", "%08.3f", "%-14.2g", "%.17g",
        ];
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            -f64::INFINITY,
            f64::NAN,
            -f64::NAN,
            5e-324,
            f64::MAX,
            0.5,
            9.5,
            0.000_099_999_5,
            999_999.5,
            1e16,
            2.5e-5,
        ];
        for round in 0..3000 {
            let slot: u64 = rng.random();
            let slot = match round % 4 {
                0 => slot,
                1 => slot >> rng.random_range(0..64),
                2 => (slot as i64 >> rng.random_range(0..64)) as u64,
                _ => u64::from(rng.random::<u16>()),
            };
            let format = integers[round % integers.len()];
            assert_eq!(
                render(format.as_bytes(), &slot.to_le_bytes()).unwrap(),
                libc(format, slot, false),
                "{format} {slot:#x}"
            );
            let value = match round % 3 {
                0 => f64::from_bits(slot),
                1 => specials[round % specials.len()],
                _ => rng.random_range(-1e7..1e7) * 10f64.powi(rng.random_range(-12..12)),
            };
            for format in floats {
                let bits = value.to_bits();
                assert_eq!(
                    render(format.as_bytes(), &bits.to_le_bytes()).unwrap(),
                    libc(format, bits, true),
                    "{format} {value:e}"
                );
            }
        }
    }

    #[test]
    fn missing_arguments_and_unterminated_strings_are_errors() {
        assert!(
            render(b"%d %d", &7u64.to_le_bytes())
                .unwrap_err()
                .contains("fewer arguments")
        );
        assert!(render(b"%s", b"abc").unwrap_err().contains("no NUL"));
    }
}
