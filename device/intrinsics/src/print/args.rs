//! The values `print!` accepts and how each is stored in a frame: integers sign- or
//! zero-extended to 64 bits, floats as f64, pointers as their address, strings inline with a
//! NUL and padded to 8 bytes (the layout the HIP runtime's printf decoder reads).

use super::format::Kind;
use crate::half::{bf16, f16};

/// The longest string a frame stores; a longer one is cut to this many bytes.
pub const MAX_STR: usize = 4096;

/// A value `print!` can print. Sealed: implemented for the integers, floats (with f16 and
/// bf16), `bool`, `&str` and raw pointers.
#[diagnostic::on_unimplemented(
    message = "print! cannot print a `{Self}`: print integers, floats, bool, &str or raw pointers"
)]
pub trait PrintArg: sealed::Sealed {
    /// How the value is converted.
    const KIND: Kind;
    /// Its width in bits (integers), for zero extension.
    const BITS: u32 = 64;
    /// The 64-bit slot of a number or pointer.
    fn slot(&self) -> u64 {
        0
    }
    /// The text of a string or `bool`.
    fn text(&self) -> &[u8] {
        &[]
    }
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! integers {
    ($($t:ty => $kind:ident;)*) => {$(
        impl sealed::Sealed for $t {}
        impl PrintArg for $t {
            const KIND: Kind = Kind::$kind;
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn slot(&self) -> u64 {
                *self as i128 as u64
            }
        }
    )*};
}

integers! {
    i8 => Signed32; i16 => Signed32; i32 => Signed32; i64 => Signed64; isize => Signed64;
    u8 => Unsigned32; u16 => Unsigned32; u32 => Unsigned32; u64 => Unsigned64; usize => Unsigned64;
}

macro_rules! floats {
    ($($t:ty => |$x:ident| $wide:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl PrintArg for $t {
            const KIND: Kind = Kind::Float;
            #[inline(always)]
            fn slot(&self) -> u64 {
                let $x = *self;
                f64::to_bits($wide)
            }
        }
    )*};
}

floats! {
    f64 => |x| x;
    f32 => |x| x as f64;
    f16 => |x| x.to_f32() as f64;
    bf16 => |x| x.to_f32() as f64;
}

impl sealed::Sealed for bool {}
impl PrintArg for bool {
    const KIND: Kind = Kind::Bool;
    #[inline(always)]
    fn text(&self) -> &[u8] {
        if *self { b"true" } else { b"false" }
    }
}

impl sealed::Sealed for &str {}
impl PrintArg for &str {
    const KIND: Kind = Kind::Str;
    #[inline(always)]
    fn text(&self) -> &[u8] {
        let bytes = self.as_bytes();
        bytes.split_at(bytes.len().min(MAX_STR)).0
    }
}

impl<T: ?Sized> sealed::Sealed for *const T {}
impl<T: ?Sized> PrintArg for *const T {
    const KIND: Kind = Kind::Pointer;
    #[inline(always)]
    fn slot(&self) -> u64 {
        self.cast::<()>().addr() as u64
    }
}

impl<T: ?Sized> sealed::Sealed for *mut T {}
impl<T: ?Sized> PrintArg for *mut T {
    const KIND: Kind = Kind::Pointer;
    #[inline(always)]
    fn slot(&self) -> u64 {
        self.cast::<()>().addr() as u64
    }
}

/// The bytes one argument takes in a frame.
#[inline(always)]
pub fn stored_bytes<T: PrintArg>(value: &T) -> u32 {
    match T::KIND {
        Kind::Str => (value.text().len() as u32 + 1).next_multiple_of(8),
        _ => 8,
    }
}

/// The 8-byte slots an argument of `kind` takes in a panic record (`iron_intrinsics::panic!`
/// and the assertions): one for a number or pointer, two (address, then length) for a string
/// or `bool`, whose text the host reads from device memory.
pub const fn record_slots(kind: Kind) -> usize {
    match kind {
        Kind::Str | Kind::Bool => 2,
        _ => 1,
    }
}

/// A `print!`'s arguments: a tuple of references to [`PrintArg`] values.
#[diagnostic::on_unimplemented(
    message = "print! takes at most 12 arguments, each an integer, float, bool, &str or raw pointer"
)]
pub trait Args {
    /// Each argument's kind, in order.
    const KINDS: &'static [Kind];
    /// Whether an argument's size varies from lane to lane (a string).
    const VARYING: bool;
    /// The bytes the arguments take in a frame.
    fn stored_bytes(&self) -> u32;
    /// Stores the arguments at `at`, zero-extending the integers whose bit is set in
    /// `zero_extend`.
    ///
    /// # Safety
    /// `at` must be valid for [`stored_bytes`](Args::stored_bytes) bytes and aligned to 4.
    unsafe fn store(&self, at: *mut u8, zero_extend: u64);
    /// The 8-byte slots the arguments take in a panic record (see [`record_slots`]).
    const SLOTS: usize;
    /// Stores the arguments at `at` as a panic record's slots (see [`record_slots`]),
    /// zero-extending the integers whose bit is set in `zero_extend`.
    ///
    /// # Safety
    /// `at` must be valid for [`SLOTS`](Args::SLOTS) slots of 8 bytes and aligned to 4.
    unsafe fn store_slots(&self, at: *mut u32, zero_extend: u64);
}

/// The 64-bit slot of a number or pointer, `zero_extend`ed at its width if asked.
#[inline(always)]
fn slot_of<T: PrintArg>(value: &T, zero_extend: bool) -> u64 {
    let slot = value.slot();
    if zero_extend && T::BITS < 64 {
        slot & ((1u64 << T::BITS) - 1)
    } else {
        slot
    }
}

/// Stores one argument at `at` as panic-record slots and returns the address after them.
///
/// # Safety
/// `at` must be valid for the argument's [`record_slots`] and aligned to 4.
#[inline(always)]
unsafe fn store_slots_one<T: PrintArg>(value: &T, at: *mut u32, zero_extend: bool) -> *mut u32 {
    match T::KIND {
        Kind::Str | Kind::Bool => {
            let text = value.text();
            let address = text.as_ptr().addr() as u64;
            let words = [address as u32, (address >> 32) as u32, text.len() as u32, 0];
            // SAFETY: two slots aligned to 4, which the caller provides.
            unsafe {
                at.cast::<[u32; 4]>().write(words);
                at.add(4)
            }
        }
        _ => {
            let slot = slot_of(value, zero_extend);
            // SAFETY: one slot aligned to 4, which the caller provides.
            unsafe {
                at.cast::<[u32; 2]>()
                    .write([slot as u32, (slot >> 32) as u32]);
                at.add(2)
            }
        }
    }
}

/// Stores one argument at `at` and returns the address after it.
///
/// # Safety
/// `at` must be valid for the argument's [`stored_bytes`] and aligned to 4.
#[inline(always)]
unsafe fn store_one<T: PrintArg>(value: &T, at: *mut u8, zero_extend: bool) -> *mut u8 {
    match T::KIND {
        Kind::Str | Kind::Bool => {
            let text = value.text();
            let stored = stored_bytes(value) as usize;
            for i in 0..stored {
                let byte = if i < text.len() { text[i] } else { 0 };
                // SAFETY: `i` is below the argument's stored size, which the caller provides.
                unsafe { at.add(i).write(byte) };
            }
            // SAFETY: as above: the argument's stored size.
            unsafe { at.add(stored) }
        }
        _ => {
            let slot = slot_of(value, zero_extend);
            let words = [slot as u32, (slot >> 32) as u32];
            // SAFETY: 8 bytes aligned to 4, which the caller provides.
            unsafe {
                at.cast::<[u32; 2]>().write(words);
                at.add(8)
            }
        }
    }
}

macro_rules! tuples {
    ($(($($t:ident $v:ident $i:tt),*);)*) => {$(
        impl<'a, $($t: PrintArg),*> Args for ($(&'a $t,)*) {
            const KINDS: &'static [Kind] = &[$($t::KIND),*];
            const VARYING: bool = false $(|| matches!($t::KIND, Kind::Str))*;
            #[inline(always)]
            fn stored_bytes(&self) -> u32 {
                0 $(+ stored_bytes(self.$i))*
            }
            #[inline(always)]
            #[allow(unused_variables, unused_mut, unused_assignments)]
            unsafe fn store(&self, at: *mut u8, zero_extend: u64) {
                let mut at = at;
                $(
                    // SAFETY: the caller provides room for every argument.
                    at = unsafe { store_one(self.$i, at, zero_extend & (1 << $i) != 0) };
                )*
            }
            const SLOTS: usize = 0 $(+ record_slots($t::KIND))*;
            #[inline(always)]
            #[allow(unused_variables, unused_mut, unused_assignments)]
            unsafe fn store_slots(&self, at: *mut u32, zero_extend: u64) {
                let mut at = at;
                $(
                    // SAFETY: the caller provides a slot per number and two per string.
                    at = unsafe { store_slots_one(self.$i, at, zero_extend & (1 << $i) != 0) };
                )*
            }
        }
    )*};
}

tuples! {
    ();
    (A a 0);
    (A a 0, B b 1);
    (A a 0, B b 1, C c 2);
    (A a 0, B b 1, C c 2, D d 3);
    (A a 0, B b 1, C c 2, D d 3, E e 4);
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// Stores `args` into a fresh buffer of exactly their size.
    fn stored<A: Args>(args: A, zero_extend: u64) -> Vec<u8> {
        let mut words = vec![0u32; args.stored_bytes() as usize / 4];
        // SAFETY: the buffer holds `stored_bytes` bytes, aligned to 4.
        unsafe { args.store(words.as_mut_ptr().cast(), zero_extend) };
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn numbers_take_one_slot_each() {
        let bytes = stored((&-1i32, &7u8, &1.5f32, &f16::from_f32(-2.0)), 0);
        assert_eq!(bytes.len(), 32);
        assert_eq!(&bytes[0..8], &u64::MAX.to_le_bytes());
        assert_eq!(&bytes[8..16], &7u64.to_le_bytes());
        assert_eq!(&bytes[16..24], &1.5f64.to_bits().to_le_bytes());
        assert_eq!(&bytes[24..32], &(-2.0f64).to_bits().to_le_bytes());
    }

    #[test]
    fn signed_values_printed_in_hex_are_zero_extended_at_their_width() {
        let bytes = stored((&-1i8, &-1i32, &-1i64), 0b111);
        assert_eq!(&bytes[0..8], &0xffu64.to_le_bytes());
        assert_eq!(&bytes[8..16], &0xffff_ffffu64.to_le_bytes());
        assert_eq!(&bytes[16..24], &u64::MAX.to_le_bytes());
    }

    #[test]
    fn panic_slots_hold_numbers_and_the_address_and_length_of_texts() {
        let text = "all ones";
        let args = (&-2i32, &2.5f32, &text, &false, &0xffu8);
        const { assert!(<(&i32, &f32, &&str, &bool, &u8) as Args>::SLOTS == 7) };
        let mut words = [0u32; 14];
        // SAFETY: 7 slots of two words.
        unsafe { args.store_slots(words.as_mut_ptr(), 0b1) };
        let slot = |i: usize| u64::from(words[2 * i]) | u64::from(words[2 * i + 1]) << 32;
        assert_eq!(slot(0), 0xffff_fffe, "zero-extended at 32 bits");
        assert_eq!(slot(1), 2.5f64.to_bits());
        assert_eq!(slot(2), text.as_ptr() as u64);
        assert_eq!(slot(3), 8);
        // SAFETY: the slots give the address and length of a static text.
        let read = unsafe { core::slice::from_raw_parts(slot(4) as *const u8, slot(5) as usize) };
        assert_eq!(read, b"false");
        assert_eq!(slot(6), 0xff);
        assert_eq!(
            (record_slots(Kind::Str), record_slots(Kind::Pointer)),
            (2, 1)
        );
    }

    #[test]
    fn strings_are_inline_with_a_nul_and_padded_to_8() {
        let bytes = stored((&"abcdefgh", &true, &""), 0);
        assert_eq!(&bytes[..16], b"abcdefgh\0\0\0\0\0\0\0\0");
        assert_eq!(&bytes[16..24], b"true\0\0\0\0");
        assert_eq!(&bytes[24..], b"\0\0\0\0\0\0\0\0");
        let long = "x".repeat(MAX_STR + 100);
        assert_eq!(stored_bytes(&long.as_str()), MAX_STR as u32 + 8);
        const { assert!(<(&&str, &u32) as Args>::VARYING && !<(&bool,) as Args>::VARYING) };
    }
}
