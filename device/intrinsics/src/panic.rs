//! Panics on the device: the panic handler of every Iron code object, the messages with
//! arguments it records, and [`panic!`](crate::panic!), [`assert!`](crate::assert!),
//! [`assert_eq!`](crate::assert_eq!), [`assert_ne!`](crate::assert_ne!) and
//! [`unreachable!`](crate::unreachable!), which record their arguments.
//!
//! A failed bounds check, assertion or `panic!` records where it happened and why in the code
//! object's panic record, then traps the wave (`s_trap 2`), which a device reports as a kernel
//! fault and the host completes with the record. (`s_sethalt` would let LLVM delete the
//! checks; `s_endpgm` would end the wave silently.)
//!
//! The record is the global `iron_panic` (the host finds it by name, on the emulator and
//! through `hipModuleGetGlobal`): the first lane to panic in a dispatch claims it and writes
//! the workgroup, wave, lane, file, line and column, and the message: a constant text, or a C
//! format (translated at compile time from the Rust template, as `print!` does) with its
//! arguments as 8-byte slots, which the host renders with the decoder of `print!`'s frames.
//! Not the printf buffer: a kernel with a printf buffer is one the HIP runtime waits for after
//! every launch, and every kernel with a bounds check can panic.
//!
//! Nothing is formatted on the device: `core::fmt`'s indirect calls would make LLVM assume an
//! unknown callee's stack and registers for every kernel with a bounds check. So:
//!
//! - `core`'s failures that format integers or take a message record their values: a bounds
//!   check (`index out of bounds: the len is {} but the index is {}`), a slice range
//!   (`range start index {} out of range for slice of length {}`, `range end index {} out of
//!   range for slice of length {}`, `slice index starts at {} but ends at {}`),
//!   `copy_from_slice` of another length, `Option::expect` (its message) and
//!   `Result::expect`/`unwrap` (the message; the error value is not recorded). The build
//!   (`iron-build`) makes those `core` functions call this module's recorders after LTO, and
//!   deletes what no kernel calls.
//! - This crate's [`panic!`](crate::panic!), [`assert!`](crate::assert!),
//!   [`assert_eq!`](crate::assert_eq!), [`assert_ne!`](crate::assert_ne!) and
//!   [`unreachable!`](crate::unreachable!) record their arguments, of the kinds `print!`
//!   takes (integers, floats with f16 and bf16, `bool`, `&str`, raw pointers), with `print!`'s
//!   placeholders. A `&str` or `bool` is recorded as its address and length, and the host
//!   reads the text when it reads the record: a string in the code object, or in a buffer the
//!   kernel was given, reads back; one in the kernel's scratch does not. Import them by name
//!   to use them in place of `core`'s (`use iron_intrinsics::{assert, assert_eq};`: a glob
//!   import of the crate leaves them ambiguous with the prelude's); on the host they are
//!   `core`'s.
//! - `core`'s own `panic!`/`assert!` with arguments, and any other formatted message, record
//!   everything but the message, and say so.
//!
//! # The record
//!
//! [`RECORD_WORDS`] little-endian 32-bit words (the host's `iron::device_panic` reads the
//! same layout):
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
//! | 14 | bits 0-7: flags, bit 0 [`LEFT_OUT`], bit 1 [`FORMAT`]; bits 8-15: the argument slots used |
//! | 15 | unused (0) |
//! | 16 ... | [`MAX_SLOTS`] slots of two words (low, high): a number or pointer takes one (integers extended to 64 bits, floats as f64), a `&str` or `bool` two (its text's address, then its length) |

/// Words of the panic record.
pub const RECORD_WORDS: usize = 16 + 2 * MAX_SLOTS;

/// Argument slots of the panic record (a message takes at most 12 arguments, as `print!`).
pub const MAX_SLOTS: usize = 24;

/// The record's state word: nothing recorded.
pub const EMPTY: u32 = 0;
/// A lane is writing the record.
pub const WRITING: u32 = 1;
/// The record is complete: the host may read it.
pub const COMPLETE: u32 = 2;

/// Flag: the message had arguments and is not recorded (`core`'s formatting).
pub const LEFT_OUT: u32 = 1;
/// Flag: the message is a C format whose arguments are in the slots.
pub const FORMAT: u32 = 2;

/// The word of the record where the argument slots start.
pub const SLOTS_AT: usize = 16;

/// The shift of the argument slots used in the flags word (14).
pub const SLOTS_SHIFT: u32 = 8;

#[cfg(target_arch = "amdgpu")]
pub use device::*;

#[cfg(target_arch = "amdgpu")]
mod device {
    use super::{
        COMPLETE, EMPTY, FORMAT, LEFT_OUT, MAX_SLOTS, RECORD_WORDS, SLOTS_AT, SLOTS_SHIFT, WRITING,
    };
    use crate::atomic::{self, Ordering, Scope};
    use crate::id;
    use crate::print::Template;
    use crate::print::args::{Args, PrintArg};
    use crate::print::format::{Format, translate};
    use core::panic::Location;

    /// The panic record, laid out as [the module](super) says.
    #[unsafe(export_name = "iron_panic")]
    static mut RECORD: [u32; RECORD_WORDS] = [0; RECORD_WORDS];

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
        let message = info.message().as_str();
        let flags = if message.is_none() { LEFT_OUT } else { 0 };
        let text = message.unwrap_or("").as_bytes();
        write(info.location(), text, flags, 0, |_| {});
        core::intrinsics::abort()
    }

    /// Writes the record if no lane of the dispatch has yet: the site, the message, the flags,
    /// the number of argument slots and, through `store`, the slots.
    #[inline(always)]
    fn write(
        location: Option<&Location<'_>>,
        message: &[u8],
        flags: u32,
        slots: usize,
        store: impl FnOnce(*mut u32),
    ) {
        let record = (&raw mut RECORD).cast::<u32>();
        // SAFETY: the record is a static of RECORD_WORDS aligned words; the state word is only
        // updated atomically, and only the lane that moved it from EMPTY writes the others.
        unsafe {
            if atomic::compare_exchange(
                record,
                EMPTY,
                WRITING,
                Ordering::Relaxed,
                Ordering::Relaxed,
                Scope::Agent,
            )
            .is_err()
            {
                return;
            }
            let (file, line, column) =
                location.map_or(("", 0, 0), |l| (l.file(), l.line(), l.column()));
            let file_at = file.as_ptr().addr() as u64;
            let message_at = message.as_ptr().addr() as u64;
            let words = [
                id::workgroup_id_x(),
                id::workgroup_id_y(),
                id::workgroup_id_z(),
                id::wave_id(),
                id::lane_id(),
                line,
                column,
                file_at as u32,
                (file_at >> 32) as u32,
                file.len() as u32,
                message_at as u32,
                (message_at >> 32) as u32,
                message.len() as u32,
                flags | (slots as u32) << SLOTS_SHIFT,
            ];
            // Plain stores, ordered before the state word by the release: a volatile store
            // each would be a separate flat store with a wait, and more registers at every
            // panic site.
            record.add(1).cast::<[u32; 14]>().write(words);
            store(record.add(SLOTS_AT));
            atomic::store(record, COMPLETE, Ordering::Release, Scope::Agent);
        }
    }

    /// A template translated for its arguments: the C format, exactly as long as its text, and
    /// which arguments are stored zero-extended.
    #[derive(Clone, Copy)]
    pub struct Translated {
        text: &'static [u8],
        zero_extend: u64,
    }

    /// Translates `T`'s template for the arguments `A` at compile time (a template that does
    /// not fit them is a compile-time error at the macro).
    #[doc(hidden)]
    pub const fn translated<T: Template, A: Args>() -> Translated {
        let format = translate(T::TEXT, A::KINDS);
        Translated {
            text: exact(&format),
            zero_extend: format.zero_extend,
        }
    }

    /// The text of `format` as a static of its length (a [`Format`] holds 256 bytes). Only in
    /// constants: at run time the compile-time allocation is not there.
    const fn exact(format: &Format) -> &'static [u8] {
        let text = format.text();
        if text.is_empty() {
            return &[];
        }
        // SAFETY: a compile-time allocation of the text's length, filled, then made immutable
        // and global (so it outlives the evaluation, as a static).
        unsafe {
            let at = core::intrinsics::const_allocate(text.len(), 1);
            let mut i = 0;
            while i < text.len() {
                at.add(i).write(text[i]);
                i += 1;
            }
            core::slice::from_raw_parts(core::intrinsics::const_make_global(at), text.len())
        }
    }

    /// Records `format` with `args` for `location`.
    #[inline(always)]
    fn record<A: Args>(location: &Location<'_>, format: Translated, args: A) {
        const {
            assert!(
                A::SLOTS <= MAX_SLOTS,
                "a panic message takes at most 24 slots"
            )
        };
        write(Some(location), format.text, FORMAT, A::SLOTS, |at| {
            // SAFETY: the record has MAX_SLOTS slots from `at`.
            unsafe { args.store_slots(at, format.zero_extend) }
        });
    }

    /// Records `T`'s template with `args` for the caller and traps; called by the macros.
    #[doc(hidden)]
    #[track_caller]
    #[inline(always)]
    pub fn fail<T: Template, A: Args>(args: A) -> ! {
        record(Location::caller(), const { translated::<T, A>() }, args);
        core::intrinsics::abort()
    }

    /// Records the constant `message` for the caller and traps; called by the macros.
    #[doc(hidden)]
    #[track_caller]
    #[inline(always)]
    pub fn fail_message(message: &'static str) -> ! {
        write(Some(Location::caller()), message.as_bytes(), 0, 0, |_| {});
        core::intrinsics::abort()
    }

    /// An operand of a failed `assert_eq!`/`assert_ne!`: recorded when it is of a kind
    /// `print!` takes ([`Recorded`]), else replaced by a note ([`NotRecorded`]).
    #[doc(hidden)]
    pub struct Operand<'a, T: ?Sized>(pub &'a T);

    /// The operand itself, for a kind `print!` takes.
    #[doc(hidden)]
    pub trait Recorded<'a, T: ?Sized> {
        /// The operand.
        fn operand(&self) -> &'a T;
    }

    impl<'a, T: PrintArg> Recorded<'a, T> for Operand<'a, T> {
        #[inline(always)]
        fn operand(&self) -> &'a T {
            self.0
        }
    }

    /// A note in place of an operand of another type (chosen when [`Recorded`] does not apply:
    /// `(&Operand(x)).operand()` takes [`Recorded`]'s method first, then this one's).
    #[doc(hidden)]
    pub trait NotRecorded {
        /// The note.
        fn operand(&self) -> &'static &'static str;
    }

    impl<T: ?Sized> NotRecorded for &Operand<'_, T> {
        #[inline(always)]
        fn operand(&self) -> &'static &'static str {
            &"(not recorded: not an integer, float, bool, &str or pointer)"
        }
    }

    /// Declares a template type per `core` message the recorders reproduce.
    macro_rules! templates {
        ($($name:ident = $text:literal;)*) => {$(
            struct $name;
            impl Template for $name {
                const TEXT: &'static str = $text;
            }
        )*};
    }

    templates! {
        BoundsCheck = "index out of bounds: the len is {} but the index is {}";
        RangeStart = "range start index {} out of range for slice of length {}";
        RangeEnd = "range end index {} out of range for slice of length {}";
        RangeOrder = "slice index starts at {} but ends at {}";
        LengthMismatch = "copy_from_slice: source slice length ({}) does not match destination slice length ({})";
        UnwrapFailed = "{}: (the error value is not recorded)";
    }

    // The recorders of `core`'s failures. Each has the parameters of the `core` function it
    // stands for (with `#[track_caller]`'s location last), and iron-build replaces that
    // function's body with a call to it after LTO. Exported (unmangled) so that LTO keeps
    // them; the build makes them internal and deletes those no kernel calls.

    /// `core::panicking::panic_bounds_check`.
    #[unsafe(no_mangle)]
    #[inline(never)]
    #[cold]
    fn iron_panic_bounds_check(index: usize, len: usize, location: &Location<'_>) -> ! {
        record(
            location,
            const { translated::<BoundsCheck, (&usize, &usize)>() },
            (&len, &index),
        );
        core::intrinsics::abort()
    }

    /// `core::slice::index::slice_index_fail`: the message `core` picks for the range.
    #[unsafe(no_mangle)]
    #[inline(never)]
    #[cold]
    fn iron_panic_slice_index_fail(
        start: usize,
        end: usize,
        len: usize,
        location: &Location<'_>,
    ) -> ! {
        let (format, a, b) = if start > len {
            (
                const { translated::<RangeStart, (&usize, &usize)>() },
                start,
                len,
            )
        } else if end > len || start <= end {
            // The last case in `core` (an inclusive range ending at `len`) says the same.
            (
                const { translated::<RangeEnd, (&usize, &usize)>() },
                end,
                len,
            )
        } else {
            (
                const { translated::<RangeOrder, (&usize, &usize)>() },
                start,
                end,
            )
        };
        record(location, format, (&a, &b));
        core::intrinsics::abort()
    }

    /// `core::slice::copy_from_slice_impl::len_mismatch_fail`.
    #[unsafe(no_mangle)]
    #[inline(never)]
    #[cold]
    fn iron_panic_len_mismatch_fail(dst_len: usize, src_len: usize, location: &Location<'_>) -> ! {
        record(
            location,
            const { translated::<LengthMismatch, (&usize, &usize)>() },
            (&src_len, &dst_len),
        );
        core::intrinsics::abort()
    }

    /// `core::option::expect_failed`: the message.
    #[unsafe(no_mangle)]
    #[inline(never)]
    #[cold]
    fn iron_panic_expect_failed(message: &str, location: &Location<'_>) -> ! {
        write(Some(location), message.as_bytes(), 0, 0, |_| {});
        core::intrinsics::abort()
    }

    /// `core::result::unwrap_failed`: the message, without the error value.
    #[unsafe(no_mangle)]
    #[inline(never)]
    #[cold]
    fn iron_panic_unwrap_failed(
        message: &str,
        _error: &dyn core::fmt::Debug,
        location: &Location<'_>,
    ) -> ! {
        record(
            location,
            const { translated::<UnwrapFailed, (&&str,)>() },
            (&message,),
        );
        core::intrinsics::abort()
    }

    /// Keeps the parameters of the `core` functions the recorders stand for through LTO, which
    /// would otherwise drop those that are the same at every call (a single bounds check's
    /// location, an array's length) and the build could not pass them on: it calls each of
    /// them at two places, one or the other as `first` says, with values LTO cannot know.
    /// Exported so that LTO keeps it; the build deletes it first.
    #[unsafe(no_mangle)]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn iron_panic_keep(
        first: bool,
        a: &mut [u32],
        b: &[u32],
        i: usize,
        j: usize,
        o: [Option<u32>; 2],
        r: Result<u32, u32>,
        q: Result<u32, u64>,
        m: [&str; 2],
    ) -> u32 {
        let (v, w, c, d) = if first {
            a.copy_from_slice(b);
            (a[i], a[i..j].len(), o[0].expect(m[0]), r.expect(m[0]))
        } else {
            a[..i].copy_from_slice(&b[..j]);
            (
                b[j],
                b[j..=i].len(),
                o[1].expect(m[1]),
                q.expect(m[1]) as u32,
            )
        };
        v + w as u32 + c + d
    }
}

/// Panics with a message that records its arguments: `panic!("x = {}, y = {:.3}", x, y)`.
///
/// On the device the template and its arguments follow [`print!`](crate::print!)'s rules
/// (`{}` placeholders, at most 12 arguments of the kinds it prints; no names or positions);
/// the message is rendered on the host when it reads the panic record (see
/// [the module](mod@crate::panic)). `panic!()` says `explicit panic`. On the host this is
/// `core::panic!`.
#[cfg(target_arch = "amdgpu")]
#[macro_export]
macro_rules! panic {
    () => {
        $crate::panic::fail_message("explicit panic")
    };
    ($template:literal $(, $arg:expr)* $(,)?) => {
        $crate::__panic_template!($template $(, $arg)*)
    };
}

/// `core::panic!` (on the device, Iron's: see its documentation there).
#[cfg(not(target_arch = "amdgpu"))]
#[macro_export]
macro_rules! panic {
    ($($t:tt)*) => {
        ::core::panic!($($t)*)
    };
}

/// Asserts that a condition holds, recording the message's arguments when it does not:
/// `assert!(i < n, "i = {} n = {}", i, n)`. Without a message it records
/// `assertion failed: <the condition>`, as `core::assert!`. See [`panic!`](crate::panic!) for
/// the template. On the host this is `core::assert!`.
#[cfg(target_arch = "amdgpu")]
#[macro_export]
macro_rules! assert {
    ($cond:expr $(,)?) => {
        if !$cond {
            $crate::panic::fail_message(::core::concat!(
                "assertion failed: ",
                ::core::stringify!($cond)
            ))
        }
    };
    ($cond:expr, $template:literal $(, $arg:expr)* $(,)?) => {
        if !$cond {
            $crate::__panic_template!($template $(, $arg)*)
        }
    };
}

/// `core::assert!` (on the device, Iron's: see its documentation there).
#[cfg(not(target_arch = "amdgpu"))]
#[macro_export]
macro_rules! assert {
    ($($t:tt)*) => {
        ::core::assert!($($t)*)
    };
}

/// Asserts that two expressions are equal (`==`), recording both values when they are of a
/// kind [`print!`](crate::print!) takes, with `core::assert_eq!`'s message:
///
/// ```text
/// assertion `left == right` failed: <the optional message>
///   left: 3
///  right: 4
/// ```
///
/// An operand of another type (or of a generic type) is recorded as a note that it is not.
/// On the host this is `core::assert_eq!`.
#[cfg(target_arch = "amdgpu")]
#[macro_export]
macro_rules! assert_eq {
    ($left:expr, $right:expr $(, $($rest:tt)*)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if !(*left == *right) {
                    $crate::__assert_failed!("==", left, right $(, $($rest)*)?)
                }
            }
        }
    };
}

/// `core::assert_eq!` (on the device, Iron's: see its documentation there).
#[cfg(not(target_arch = "amdgpu"))]
#[macro_export]
macro_rules! assert_eq {
    ($($t:tt)*) => {
        ::core::assert_eq!($($t)*)
    };
}

/// Asserts that two expressions are not equal (`!=`), as [`assert_eq!`](crate::assert_eq!)
/// does for `==`. On the host this is `core::assert_ne!`.
#[cfg(target_arch = "amdgpu")]
#[macro_export]
macro_rules! assert_ne {
    ($left:expr, $right:expr $(, $($rest:tt)*)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left == *right {
                    $crate::__assert_failed!("!=", left, right $(, $($rest)*)?)
                }
            }
        }
    };
}

/// `core::assert_ne!` (on the device, Iron's: see its documentation there).
#[cfg(not(target_arch = "amdgpu"))]
#[macro_export]
macro_rules! assert_ne {
    ($($t:tt)*) => {
        ::core::assert_ne!($($t)*)
    };
}

/// Marks code that cannot be reached: `internal error: entered unreachable code`, then the
/// message with its recorded arguments if one is given (see [`panic!`](crate::panic!)). On
/// the host this is `core::unreachable!`.
#[cfg(target_arch = "amdgpu")]
#[macro_export]
macro_rules! unreachable {
    () => {
        $crate::panic::fail_message("internal error: entered unreachable code")
    };
    ($template:literal $(, $arg:expr)* $(,)?) => {
        $crate::__panic_template!(
            ::core::concat!("internal error: entered unreachable code: ", $template)
            $(, $arg)*
        )
    };
}

/// `core::unreachable!` (on the device, Iron's: see its documentation there).
#[cfg(not(target_arch = "amdgpu"))]
#[macro_export]
macro_rules! unreachable {
    ($($t:tt)*) => {
        ::core::unreachable!($($t)*)
    };
}

/// The failure of [`assert_eq!`](crate::assert_eq!) and [`assert_ne!`](crate::assert_ne!):
/// `core`'s message with the operands `left` and `right` (references) as the last arguments.
#[doc(hidden)]
#[macro_export]
macro_rules! __assert_failed {
    ($op:literal, $left:ident, $right:ident $(,)?) => {
        $crate::__assert_failed!(@record
            ::core::concat!("assertion `left ", $op, " right` failed\n  left: {}\n right: {}"),
            $left, $right;)
    };
    ($op:literal, $left:ident, $right:ident, $template:literal $(, $arg:expr)* $(,)?) => {
        $crate::__assert_failed!(@record
            ::core::concat!(
                "assertion `left ", $op, " right` failed: ", $template,
                "\n  left: {}\n right: {}"
            ),
            $left, $right; $($arg),*)
    };
    (@record $template:expr, $left:ident, $right:ident; $($arg:expr),*) => {{
        #[allow(unused_imports)]
        use $crate::panic::{NotRecorded as _, Recorded as _};
        $crate::__panic_template!(
            $template
            $(, $arg)*,
            *(&$crate::panic::Operand($left)).operand(),
            *(&$crate::panic::Operand($right)).operand()
        )
    }};
}

/// The body of the device's [`panic!`](crate::panic!) and assertions, for a template given as
/// a constant expression.
#[doc(hidden)]
#[macro_export]
macro_rules! __panic_template {
    ($template:expr $(, $arg:expr)*) => {{
        struct Template;
        impl $crate::print::Template for Template {
            const TEXT: &'static str = $template;
        }
        $crate::panic::fail::<Template, _>(($(&$arg,)*))
    }};
}
