//! Translating a `print!` template (Rust's `{}` syntax) into the C format string the HIP
//! runtime's printf decoder reads, at compile time.
//!
//! Each argument's type gives its conversion ([`Kind`]); the placeholder may add alignment,
//! `+`, `#`, `0`, a width, a precision and a type (`x`, `X`, `o`, `e`, `E`, `p`, `?`). A template
//! the C format cannot express (centring, a fill character, `{:b}`, named or positional
//! arguments, `{:?}` of a string) is a compile-time error at the `print!`.

/// What an argument is, as far as its conversion goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A signed integer of at most 32 bits.
    Signed32,
    /// An unsigned integer of at most 32 bits.
    Unsigned32,
    /// A signed 64-bit integer.
    Signed64,
    /// An unsigned 64-bit integer.
    Unsigned64,
    /// A float of any width, printed from an f64.
    Float,
    /// A raw pointer.
    Pointer,
    /// A string, stored in the frame.
    Str,
    /// A `bool`, stored as the string `true` or `false`.
    Bool,
}

/// The largest C format string, with its NUL, a template may translate to.
pub const MAX_FORMAT: usize = 256;

/// A translated template: the C format string and how to store each argument.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    /// The C format string, NUL-padded to [`MAX_FORMAT`] bytes.
    pub bytes: [u8; MAX_FORMAT],
    /// Its length without the NUL.
    pub len: usize,
    /// Bit `i` set: argument `i` is a signed 32-bit integer printed in hex or octal, so it is
    /// stored zero-extended (as Rust prints it), not sign-extended.
    pub zero_extend: u64,
}

impl Format {
    /// The format string's bytes, without the NUL.
    pub const fn text(&self) -> &[u8] {
        self.bytes.split_at(self.len).0
    }

    /// The bytes the format string takes in a frame: with its NUL, rounded up to 8.
    pub const fn stored_len(&self) -> usize {
        (self.len + 1).next_multiple_of(8)
    }
}

/// A placeholder's options, as parsed from `{:...}`.
#[derive(Clone, Copy)]
struct Spec {
    left: bool,
    right: bool,
    plus: bool,
    alternate: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
    kind: u8,
}

/// Appends bytes to a [`Format`] under construction, failing at compile time when it is full.
struct Writer {
    format: Format,
}

impl Writer {
    const fn push(&mut self, byte: u8) {
        if self.format.len + 1 >= MAX_FORMAT {
            panic!("print!: the template translates to a C format longer than 255 bytes");
        }
        self.format.bytes[self.format.len] = byte;
        self.format.len += 1;
    }

    const fn push_str(&mut self, text: &[u8]) {
        let mut i = 0;
        while i < text.len() {
            self.push(text[i]);
            i += 1;
        }
    }

    const fn push_number(&mut self, value: usize) {
        if value >= 10 {
            self.push_number(value / 10);
        }
        self.push(b'0' + (value % 10) as u8);
    }
}

/// Translates `template` for arguments of `kinds`, panicking (a compile-time error where the
/// result is a constant) when they do not fit together.
pub const fn translate(template: &str, kinds: &[Kind]) -> Format {
    let text = template.as_bytes();
    let mut out = Writer {
        format: Format {
            bytes: [0; MAX_FORMAT],
            len: 0,
            zero_extend: 0,
        },
    };
    let mut i = 0;
    let mut arg = 0;
    while i < text.len() {
        let byte = text[i];
        if byte == b'{' && i + 1 < text.len() && text[i + 1] == b'{' {
            out.push(b'{');
            i += 2;
        } else if byte == b'}' && i + 1 < text.len() && text[i + 1] == b'}' {
            out.push(b'}');
            i += 2;
        } else if byte == b'}' {
            panic!("print!: an unmatched `}}` in the template: write `}}}}` for a brace");
        } else if byte == b'{' {
            let (spec, next) = parse_spec(text, i + 1);
            if arg >= kinds.len() {
                panic!("print!: the template has more `{{}}` placeholders than arguments");
            }
            if emit(&mut out, spec, kinds[arg]) {
                out.format.zero_extend |= 1 << arg;
            }
            arg += 1;
            i = next;
        } else {
            if byte == b'%' {
                out.push(b'%');
            }
            out.push(byte);
            i += 1;
        }
    }
    if arg != kinds.len() {
        panic!("print!: more arguments than `{{}}` placeholders in the template");
    }
    out.format
}

/// Parses the placeholder starting after its `{` at `start`; returns it and the index after
/// its `}`.
const fn parse_spec(text: &[u8], start: usize) -> (Spec, usize) {
    let mut spec = Spec {
        left: false,
        right: false,
        plus: false,
        alternate: false,
        zero: false,
        width: None,
        precision: None,
        kind: 0,
    };
    let mut i = start;
    if i < text.len() && text[i] == b'}' {
        return (spec, i + 1);
    }
    if i >= text.len() || text[i] != b':' {
        panic!("print!: placeholders are `{{}}` or `{{:spec}}`: no names or positions");
    }
    i += 1;
    if i + 1 < text.len() && matches!(text[i + 1], b'<' | b'>' | b'^') {
        panic!("print!: a fill character is not supported (C pads with spaces or zeros)");
    }
    if i < text.len() {
        match text[i] {
            b'<' => {
                spec.left = true;
                i += 1;
            }
            b'>' => {
                spec.right = true;
                i += 1;
            }
            b'^' => panic!("print!: centring (`^`) is not supported"),
            _ => {}
        }
    }
    if i < text.len() && text[i] == b'+' {
        spec.plus = true;
        i += 1;
    }
    if i < text.len() && text[i] == b'#' {
        spec.alternate = true;
        i += 1;
    }
    if i < text.len() && text[i] == b'0' {
        spec.zero = true;
        i += 1;
    }
    let (width, next) = number(text, i);
    spec.width = width;
    i = next;
    if i < text.len() && text[i] == b'.' {
        let (precision, next) = number(text, i + 1);
        if precision.is_none() {
            panic!("print!: a `.` must be followed by the precision's digits");
        }
        spec.precision = precision;
        i = next;
    }
    if i < text.len() && text[i] != b'}' {
        spec.kind = text[i];
        i += 1;
    }
    if i >= text.len() || text[i] != b'}' {
        panic!("print!: an unterminated or unsupported placeholder (see print!'s documentation)");
    }
    (spec, i + 1)
}

/// The decimal number at `at`, if there are digits, and the index after them.
const fn number(text: &[u8], at: usize) -> (Option<usize>, usize) {
    let mut i = at;
    let mut value = 0usize;
    while i < text.len() && text[i].is_ascii_digit() {
        if value > 9999 {
            panic!("print!: a width or precision above 99999");
        }
        value = value * 10 + (text[i] - b'0') as usize;
        i += 1;
    }
    (if i > at { Some(value) } else { None }, i)
}

/// Writes the C conversion of one placeholder; returns whether the argument is stored
/// zero-extended.
const fn emit(out: &mut Writer, spec: Spec, kind: Kind) -> bool {
    let textual = matches!(kind, Kind::Str | Kind::Bool);
    let integer = matches!(
        kind,
        Kind::Signed32 | Kind::Unsigned32 | Kind::Signed64 | Kind::Unsigned64
    );
    // Rust's `#` prefixes are `0x` and `0o` (C's are `0x`/`0X` and `0`, and none for zero), so
    // they are written as text, the width shrinking by the prefix.
    let mut spec = spec;
    if spec.alternate && integer && matches!(spec.kind, b'x' | b'X' | b'o') {
        if spec.width.is_some() && !spec.zero && !spec.left {
            panic!(
                "print!: `{{:#Nx}}` pads with spaces before the `0x`, which C cannot: use `{{:#0Nx}}` or `{{:<#Nx}}`"
            );
        }
        out.push_str(if spec.kind == b'o' { b"0o" } else { b"0x" });
        spec.alternate = false;
        spec.width = match spec.width {
            Some(w) if w > 2 => Some(w - 2),
            _ => None,
        };
    }
    out.push(b'%');
    // Rust aligns text left and numbers right; C aligns everything right.
    if spec.left || (textual && !spec.right && spec.width.is_some()) {
        out.push(b'-');
    }
    if spec.plus {
        if textual || matches!(kind, Kind::Pointer) {
            panic!("print!: `+` applies to numbers only");
        }
        out.push(b'+');
    }
    if spec.alternate {
        out.push(b'#');
    }
    if spec.zero {
        if textual {
            panic!("print!: zero padding applies to numbers only");
        }
        out.push(b'0');
    }
    if let Some(width) = spec.width {
        out.push_number(width);
    }
    if let Some(precision) = spec.precision {
        if !matches!(kind, Kind::Float | Kind::Str) {
            panic!("print!: a precision applies to floats and strings only");
        }
        out.push(b'.');
        out.push_number(precision);
    }
    let wide = matches!(kind, Kind::Signed64 | Kind::Unsigned64);
    let conversion = match (spec.kind, kind) {
        (0 | b'?', Kind::Signed32 | Kind::Signed64) => b'd',
        (0 | b'?', Kind::Unsigned32 | Kind::Unsigned64) => b'u',
        (b'x' | b'X' | b'o', _) if integer => spec.kind,
        (0 | b'?', Kind::Float) => {
            if spec.precision.is_some() {
                b'f'
            } else {
                b'g'
            }
        }
        (b'e' | b'E', Kind::Float) => spec.kind,
        (0 | b'p', Kind::Pointer) => b'p',
        (0, Kind::Str | Kind::Bool) => b's',
        (b'?', Kind::Str) => panic!("print!: `{{:?}}` of a string is not supported: use `{{}}`"),
        (b'b', _) => panic!("print!: C printf has no binary conversion (`{{:b}}`): use `{{:x}}`"),
        _ => panic!("print!: the placeholder's type does not apply to its argument"),
    };
    if wide {
        out.push(b'l');
    }
    out.push(conversion);
    matches!(kind, Kind::Signed32) && matches!(conversion, b'x' | b'X' | b'o')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::{String, ToString};

    fn c(template: &str, kinds: &[Kind]) -> String {
        String::from_utf8(translate(template, kinds).text().to_vec()).unwrap()
    }

    #[test]
    fn placeholders_take_their_conversion_from_the_argument_kind() {
        use Kind::*;
        assert_eq!(c("x = {}\n", &[Signed32]), "x = %d\n");
        assert_eq!(
            c("{} {} {} {}", &[Unsigned32, Signed64, Unsigned64, Float]),
            "%u %ld %lu %g"
        );
        assert_eq!(c("{} {} {}", &[Pointer, Str, Bool]), "%p %s %s");
        assert_eq!(
            c("{:x} {:#X} {:o}", &[Unsigned32, Unsigned64, Signed32]),
            "%x 0x%lX %o"
        );
        assert_eq!(
            c("{:#010x}|{:<#8o}|{:#x}", &[Unsigned32; 3]),
            "0x%08x|0o%-6o|0x%x"
        );
        assert_eq!(
            c("{:.3} {:e} {:10.2E}", &[Float, Float, Float]),
            "%.3f %e %10.2E"
        );
        assert_eq!(
            c("{:5}|{:<5}|{:05}|{:+}", &[Signed32; 4]),
            "%5d|%-5d|%05d|%+d"
        );
        assert_eq!(c("{:8}|{:>8}|{:.2}", &[Str, Str, Str]), "%-8s|%8s|%.2s");
        assert_eq!(c("{:?}", &[Float]), "%g");
    }

    #[test]
    fn braces_and_percent_signs_are_escaped() {
        assert_eq!(c("{{{}}} 100%", &[Kind::Unsigned32]), "{%u} 100%%");
        assert_eq!(c("", &[]), "");
    }

    #[test]
    fn only_signed_32_bit_hex_is_zero_extended() {
        use Kind::*;
        let f = translate(
            "{:x} {} {:x} {:o}",
            &[Signed32, Signed32, Signed64, Signed32],
        );
        assert_eq!(f.zero_extend, 0b1001);
    }

    #[test]
    fn the_stored_length_keeps_the_nul_and_rounds_to_8() {
        assert_eq!(translate("1234567", &[]).stored_len(), 8);
        assert_eq!(translate("12345678", &[]).stored_len(), 16);
        assert_eq!(translate("", &[]).stored_len(), 8);
    }

    #[test]
    fn templates_c_cannot_express_are_refused() {
        use Kind::*;
        let refused = |template: &'static str, kinds: &'static [Kind]| {
            std::panic::catch_unwind(|| translate(template, kinds))
                .expect_err(template)
                .downcast_ref::<&str>()
                .map(|m| m.to_string())
                .unwrap_or_default()
        };
        assert!(refused("{}", &[]).contains("more `{}` placeholders"));
        assert!(refused("", &[Float]).contains("more arguments"));
        assert!(refused("{:b}", &[Unsigned32]).contains("binary"));
        assert!(refused("{:^5}", &[Unsigned32]).contains("centring"));
        assert!(refused("{:*<5}", &[Unsigned32]).contains("fill"));
        assert!(refused("{x}", &[Unsigned32]).contains("no names"));
        assert!(refused("{:?}", &[Str]).contains("string"));
        assert!(refused("{:.2}", &[Unsigned32]).contains("precision"));
        assert!(refused("{:x}", &[Float]).contains("does not apply"));
        assert!(refused("}", &[]).contains("unmatched"));
        assert!(refused("{:5", &[Unsigned32]).contains("unterminated"));
        assert!(refused("{:#10x}", &[Unsigned32]).contains("C cannot"));
    }
}
