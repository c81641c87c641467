//! Printing from kernels: [`print!`](crate::print!) and [`println!`](crate::println!).
//!
//! Output goes through the HIP runtime's buffered printf: each call writes a frame into the
//! kernel's `hidden_printf_buffer`, and the host prints the frames when the kernel has
//! finished. The same code object prints on ROCm (the HIP runtime decodes the buffer) and on
//! Iron's emulator and its HIP stand-in (Iron decodes it the same way).
//!
//! Templates use Rust's `{}` placeholders and are translated at compile time into the C format
//! the runtime's decoder reads (see [`format`]): integers print as `%d`/`%u` (`%ld`/`%lu` for
//! 64 bits), floats (f64, f32, f16, bf16) as `%g` (`%.Nf` with a precision, `%e` with `{:e}`),
//! pointers as `%p`, `&str` and `bool` as `%s`. Width, alignment, `+`, `#`, `0` and the types
//! `x`, `X`, `o`, `e`, `E`, `p` work as in Rust; what C cannot express is a compile-time error.
//! Floats follow C, not Rust: `{}` of `1e8` prints `1e+08`, and NaN prints `nan`.
//!
//! Order: the frames of one call from one wave are contiguous and in lane order; calls and
//! waves follow each other in the order they reached the buffer. Printing is bounded: when
//! the buffer is full, the wave's frames for that call are dropped and a line saying so is
//! printed in their place (while room for it remains). A string argument longer than
//! [`MAX_STR`](args::MAX_STR) bytes is cut.
//!
//! Cost: a call is a compare-and-swap by one lane of the wave and a store per 4 bytes of its
//! frame; a kernel that prints gets the kernarg segment's hidden arguments. On ROCm, the HIP
//! runtime waits for a kernel that can print to finish and decodes its buffer after every
//! launch, so keep prints out of kernels timed or launched in a stream's fast path.

pub mod args;
pub mod format;
mod frame;

/// A `print!` template, as a type, so that its translation is a constant of the call site.
#[doc(hidden)]
pub trait Template {
    /// The template text.
    const TEXT: &'static str;
}

/// Writes the frames of one `print!` call; called by the macros.
#[doc(hidden)]
#[inline(always)]
pub fn emit<T: Template, A: args::Args>(args: A) {
    let format: &'static format::Format = const { &format::translate(T::TEXT, A::KINDS) };
    frame::emit(format, args)
}

/// Prints from a kernel: `print!("x[{}] = {:.3}\n", i, x)`. See [the module](mod@crate::print)
/// for the placeholders, the order of output and what a full buffer does.
///
/// Every active lane that reaches the call prints; guard it (`if lane_id() == 0`) to print
/// once per wave. Arguments are integers, floats (f16 and bf16 too), `bool`, `&str` and raw
/// pointers, at most 12 of them.
#[macro_export]
macro_rules! print {
    ($template:literal $(, $arg:expr)* $(,)?) => {
        $crate::__print_template!($template $(, $arg)*)
    };
}

/// [`print!`] with a newline after the template.
#[macro_export]
macro_rules! println {
    () => {
        $crate::__print_template!("\n")
    };
    ($template:literal $(, $arg:expr)* $(,)?) => {
        $crate::__print_template!(::core::concat!($template, "\n") $(, $arg)*)
    };
}

/// The body of [`print!`] and [`println!`], for a template given as a constant expression.
#[doc(hidden)]
#[macro_export]
macro_rules! __print_template {
    ($template:expr $(, $arg:expr)*) => {{
        struct Template;
        impl $crate::print::Template for Template {
            const TEXT: &'static str = $template;
        }
        $crate::print::emit::<Template, _>(($(&$arg,)*))
    }};
}
