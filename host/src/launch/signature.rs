//! Typed kernel arguments: how each parameter type of a kernel's declaration is passed from the
//! host, and what the code object must say about it.
//!
//! A kernel's declaration (`KernelDecl<F>`, made by `#[kernel]`) carries its signature as a
//! function pointer type `F`, e.g. `fn(*const f32, *const f32, *mut f32, u32)`.
//! [`KernelSignature`] maps `F` to the tuple a launch takes, parameter by parameter through
//! [`KernelParam`]:
//!
//! | parameter | passed as | metadata |
//! | --- | --- | --- |
//! | `*const T` | `&DeviceBuffer<T>` | `global_buffer`, 8 bytes |
//! | `*mut T` | `&mut DeviceBuffer<T>` | `global_buffer`, 8 bytes |
//! | `u8` ... `u64`, `i8` ... `i64`, `usize`, `isize`, `f32`, `f64`, `bool` | the value | `by_value`, its size |
//! | [`ByValue<T>`] (`T: Pod`, a struct by value) | the `T` | `by_value`, `size_of::<T>()` |
//! | [`AddressOf<*const T>`] / [`AddressOf<*mut T>`] (`intptr_t`, `uintptr_t`, `size_t` holding a pointer) | `&DeviceBuffer<T>` / `&mut DeviceBuffer<T>` | `by_value`, 8 bytes |
//!
//! so `fn(*const f32, *const f32, *mut f32, u32)` takes
//! `(&DeviceBuffer<f32>, &DeviceBuffer<f32>, &mut DeviceBuffer<f32>, u32)`. A mismatch is a
//! compile error; kinds and sizes are checked against the metadata once, when the typed kernel
//! is resolved. Other by-value types can implement [`KernelParam`] (with [`ParamSpec::by_value`]
//! and [`LaunchArg::pod`]).
//!
//! Each argument is copied to the `.offset` the metadata gives it. The compiler lays HIP
//! kernel arguments out in declaration order, each at the next multiple of its type's alignment
//! (a `char` or `bool` after a pointer leaves no gap, a `short` after a `char` one byte, a struct
//! aligned as its most aligned member), so the host never computes padding itself: it checks
//! each argument's kind and size and trusts the offsets.

use std::borrow::Cow;
use std::marker::PhantomData;

use bytemuck::Pod;

use crate::device::{Device, DeviceBuffer};

/// How a parameter travels in the kernarg segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A pointer to device memory (`global_buffer`).
    Buffer,
    /// A value copied into the segment (`by_value`).
    Value,
}

/// What the code object must say about one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamSpec {
    /// The parameter's Rust type, for messages.
    pub rust_type: &'static str,
    /// Buffer or value.
    pub kind: ParamKind,
    /// Size in the kernarg segment, in bytes.
    pub size: u32,
}

impl ParamSpec {
    /// The spec of a `T` passed by value: `by_value`, `size_of::<T>()` bytes. For implementing
    /// [`KernelParam`] on a type of one's own.
    ///
    /// ```
    /// use iron::launch::{ParamKind, ParamSpec};
    ///
    /// let spec = ParamSpec::by_value::<[u16; 3]>();
    /// assert_eq!((spec.kind, spec.size), (ParamKind::Value, 6));
    /// ```
    pub fn by_value<T: 'static>() -> ParamSpec {
        ParamSpec {
            rust_type: std::any::type_name::<T>(),
            kind: ParamKind::Value,
            size: u32::try_from(size_of::<T>()).unwrap_or(u32::MAX),
        }
    }
}

/// One argument of a launch, as the launch code sees it.
///
/// The launch checks each against the code object's metadata: a [`Buffer`](LaunchArg::Buffer)
/// must meet a `global_buffer` argument, every other variant a `by_value` one, and the bytes
/// must be exactly the argument's `.size`. They are copied to the argument's `.offset`: the
/// compiler has already aligned every offset (each argument at the next multiple of its type's
/// alignment, a struct at its largest member's, AMDGPUUsage "Kernel Argument" layout), so the
/// host adds no padding of its own.
///
/// ```
/// use bytemuck::{Pod, Zeroable};
/// use iron::launch::LaunchArg;
///
/// #[repr(C)]
/// #[derive(Clone, Copy, Pod, Zeroable)]
/// struct Extent {
///     rows: u32,
///     cols: u32,
///     scale: f32,
/// }
///
/// let extent = Extent { rows: 3, cols: 4, scale: 0.5 };
/// let args = [
///     LaunchArg::value(&(-3i8).to_le_bytes()), // a `char`
///     LaunchArg::value(&[u8::from(true)]),     // a `bool`
///     LaunchArg::pod(&extent),                 // a 12-byte struct by value
/// ];
/// assert_eq!(&*args[0].bytes(), &[0xfd]);
/// assert_eq!(args[2].bytes().len(), 12);
/// ```
#[derive(Debug, Clone, Copy)]
pub enum LaunchArg<'a> {
    /// A device buffer: its address, and the device it lives on.
    Buffer {
        /// Device address of the first element.
        address: u64,
        /// The device that owns it.
        device: &'a Device,
    },
    /// A value's little-endian bytes: `bytes[..len]`.
    Value {
        /// The bytes, zero beyond `len`.
        bytes: [u8; 8],
        /// How many bytes the value has.
        len: usize,
    },
    /// A buffer's device address passed by value as 8 little-endian bytes, for a parameter of
    /// integer type (`intptr_t`, `uintptr_t`, `size_t`) that the kernel casts back to a
    /// pointer. The launch checks that the buffer lives on its device, as for a
    /// [`Buffer`](LaunchArg::Buffer).
    Address {
        /// Device address of the first element.
        address: u64,
        /// The device that owns it.
        device: &'a Device,
    },
    /// A by-value argument of any size as its bytes in memory order: a struct passed by value,
    /// padding included (see [`LaunchArg::pod`]).
    Bytes(&'a [u8]),
}

impl<'a> LaunchArg<'a> {
    /// A value argument from its little-endian bytes (at most 8: a scalar; longer input is cut
    /// to 8 bytes, which the launch then refuses as the wrong size). Larger values are
    /// [`LaunchArg::pod`] or [`LaunchArg::Bytes`].
    pub fn value(le_bytes: &[u8]) -> LaunchArg<'static> {
        let mut bytes = [0u8; 8];
        let len = le_bytes.len().min(8);
        bytes[..len].copy_from_slice(&le_bytes[..len]);
        LaunchArg::Value { bytes, len }
    }

    /// A by-value argument holding `value`'s bytes, for a struct (or any plain-old-data type)
    /// the kernel takes by value. `T` must be laid out as the kernel's type is: `#[repr(C)]`
    /// with the same fields, and since [`Pod`] admits no implicit padding, explicit padding
    /// fields where the C type has padding.
    ///
    /// ```
    /// use iron::launch::LaunchArg;
    ///
    /// // struct { int a; short b; char c; } is 8 bytes: a at 0, b at 4, c at 6, one byte of padding.
    /// let raw: [u8; 8] = [7, 0, 0, 0, 0xff, 0xff, 9, 0];
    /// let arg = LaunchArg::pod(&raw);
    /// assert_eq!(&*arg.bytes(), &raw);
    /// ```
    pub fn pod<T: Pod>(value: &'a T) -> LaunchArg<'a> {
        LaunchArg::Bytes(bytemuck::bytes_of(value))
    }

    /// A buffer's address as an 8-byte by-value argument (see [`LaunchArg::Address`]).
    ///
    /// ```
    /// use iron::DeviceBuffer;
    /// use iron::emulator::Emulator;
    /// use iron::launch::LaunchArg;
    ///
    /// let emulator = Emulator::new("gfx950")?;
    /// let device = emulator.device();
    /// let table = DeviceBuffer::from_slice(&device, &[1u32, 2, 3])?;
    /// let arg = LaunchArg::address_of(&table); // for a kernel parameter `uintptr_t table`
    /// assert_eq!(&*arg.bytes(), &table.address().to_le_bytes());
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn address_of<T>(buffer: &'a DeviceBuffer<T>) -> LaunchArg<'a> {
        LaunchArg::Address {
            address: buffer.address(),
            device: buffer.device(),
        }
    }

    /// How the argument travels: [`ParamKind::Buffer`] for a buffer, [`ParamKind::Value`] for
    /// everything copied into the segment by value (values, addresses, bytes).
    pub fn kind(&self) -> ParamKind {
        match self {
            LaunchArg::Buffer { .. } => ParamKind::Buffer,
            LaunchArg::Value { .. } | LaunchArg::Address { .. } | LaunchArg::Bytes(_) => {
                ParamKind::Value
            }
        }
    }

    /// The bytes the argument occupies in the kernarg segment.
    pub fn bytes(&self) -> Cow<'a, [u8]> {
        match *self {
            LaunchArg::Buffer { address, .. } | LaunchArg::Address { address, .. } => {
                Cow::Owned(address.to_le_bytes().to_vec())
            }
            LaunchArg::Value { bytes, len } => Cow::Owned(bytes[..len].to_vec()),
            LaunchArg::Bytes(bytes) => Cow::Borrowed(bytes),
        }
    }
}

/// A kernel parameter type: what the host passes for it and what the metadata must say.
pub trait KernelParam: 'static {
    /// What a launch takes for this parameter.
    type Arg<'a>;

    /// The metadata this parameter must match.
    fn spec() -> ParamSpec;

    /// The argument's address or bytes.
    fn launch_arg<'b>(arg: &'b Self::Arg<'_>) -> LaunchArg<'b>;
}

impl<T: Pod> KernelParam for *const T {
    type Arg<'a> = &'a DeviceBuffer<T>;

    fn spec() -> ParamSpec {
        ParamSpec {
            rust_type: std::any::type_name::<*const T>(),
            kind: ParamKind::Buffer,
            size: 8,
        }
    }

    fn launch_arg<'b>(arg: &'b Self::Arg<'_>) -> LaunchArg<'b> {
        LaunchArg::Buffer {
            address: arg.address(),
            device: arg.device(),
        }
    }
}

impl<T: Pod> KernelParam for *mut T {
    type Arg<'a> = &'a mut DeviceBuffer<T>;

    fn spec() -> ParamSpec {
        ParamSpec {
            rust_type: std::any::type_name::<*mut T>(),
            kind: ParamKind::Buffer,
            size: 8,
        }
    }

    fn launch_arg<'b>(arg: &'b Self::Arg<'_>) -> LaunchArg<'b> {
        LaunchArg::Buffer {
            address: arg.address(),
            device: arg.device(),
        }
    }
}

macro_rules! scalar_params {
    ($($t:ty),*) => {$(
        impl KernelParam for $t {
            type Arg<'a> = $t;

            fn spec() -> ParamSpec {
                ParamSpec {
                    rust_type: stringify!($t),
                    kind: ParamKind::Value,
                    size: size_of::<$t>() as u32,
                }
            }

            fn launch_arg<'b>(arg: &'b Self::Arg<'_>) -> LaunchArg<'b> {
                LaunchArg::value(&arg.to_le_bytes())
            }
        }
    )*};
}

scalar_params!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

impl KernelParam for bool {
    type Arg<'a> = bool;

    fn spec() -> ParamSpec {
        ParamSpec {
            rust_type: "bool",
            kind: ParamKind::Value,
            size: 1,
        }
    }

    fn launch_arg<'b>(arg: &'b bool) -> LaunchArg<'b> {
        LaunchArg::value(&[u8::from(*arg)])
    }
}

/// A parameter type for a struct (or any plain-old-data type) the kernel takes by value: a
/// signature names `ByValue<T>` where the kernel has a `T`, and the launch takes the `T` itself.
/// The metadata must record a `by_value` argument of `size_of::<T>()` bytes; `T` must be laid
/// out as the kernel's type (see [`LaunchArg::pod`]).
///
/// It only appears in signatures and is never built. A type of one's own can instead implement
/// [`KernelParam`] with [`ParamSpec::by_value`] and [`LaunchArg::pod`], as this type does.
///
/// ```no_run
/// use bytemuck::{Pod, Zeroable};
/// use iron::launch::{AddressOf, ByValue};
/// use iron::{DeviceBuffer, LaunchConfig, Module};
/// use iron_intrinsics::launch::{KernelDecl, LaunchBounds};
///
/// /// `struct Window { int start; int len; float scale; }` of the HIP source.
/// #[repr(C)]
/// #[derive(Clone, Copy, Pod, Zeroable)]
/// struct Window {
///     start: i32,
///     len: i32,
///     scale: f32,
/// }
///
/// /// `extern "C" __global__ void scale(Window w, unsigned char shift, uintptr_t src, float* out)`,
/// /// compiled by clang with HIP's default bounds (workgroups of up to 1024 work-items).
/// const SCALE: KernelDecl<fn(ByValue<Window>, u8, AddressOf<*const f32>, *mut f32)> = KernelDecl::new(
///     "scale",
///     LaunchBounds { max_threads: 1024, min_waves_per_eu: 0, max_waves_per_eu: 0, allow_scratch: false },
/// );
///
/// fn run(module: &Module, src: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>) -> Result<(), iron::DeviceError> {
///     // Checked against the metadata: a 12-byte and a 1-byte by_value, an 8-byte by_value, a buffer.
///     let kernel = module.kernel(SCALE)?;
///     let window = Window { start: 0, len: 64, scale: 2.0 };
///     let stream = module.device().default_stream();
///     // SAFETY: the kernel reads src[start..start + len] and writes out[..len], both in bounds.
///     unsafe { stream.launch(&kernel, LaunchConfig::new([1, 1, 1], [64, 1, 1]), (window, 1, src, out))? };
///     Ok(())
/// }
/// ```
pub struct ByValue<T>(PhantomData<T>);

impl<T: Pod> KernelParam for ByValue<T> {
    type Arg<'a> = T;

    fn spec() -> ParamSpec {
        ParamSpec::by_value::<T>()
    }

    fn launch_arg<'b>(arg: &'b T) -> LaunchArg<'b> {
        LaunchArg::pod(arg)
    }
}

/// A parameter type for a buffer's address passed as an integer (`intptr_t`, `uintptr_t`,
/// `size_t`) that the kernel casts back to a pointer: `AddressOf<*const T>` takes a
/// `&DeviceBuffer<T>`, `AddressOf<*mut T>` a `&mut DeviceBuffer<T>` (the kernel may write
/// through it, so no other argument may alias it). The metadata must record an 8-byte
/// `by_value` argument; the launch checks that the buffer lives on its device.
///
/// It only appears in signatures and is never built (see [`ByValue`] for an example).
pub struct AddressOf<P>(PhantomData<P>);

impl<T: Pod> KernelParam for AddressOf<*const T> {
    type Arg<'a> = &'a DeviceBuffer<T>;

    fn spec() -> ParamSpec {
        ParamSpec {
            rust_type: std::any::type_name::<AddressOf<*const T>>(),
            kind: ParamKind::Value,
            size: 8,
        }
    }

    fn launch_arg<'b>(arg: &'b Self::Arg<'_>) -> LaunchArg<'b> {
        LaunchArg::address_of(arg)
    }
}

impl<T: Pod> KernelParam for AddressOf<*mut T> {
    type Arg<'a> = &'a mut DeviceBuffer<T>;

    fn spec() -> ParamSpec {
        ParamSpec {
            rust_type: std::any::type_name::<AddressOf<*mut T>>(),
            kind: ParamKind::Value,
            size: 8,
        }
    }

    fn launch_arg<'b>(arg: &'b Self::Arg<'_>) -> LaunchArg<'b> {
        LaunchArg::address_of(arg)
    }
}

/// A kernel's signature as a function pointer type, `fn(P1, ..., Pn)` for up to 12 parameters
/// that are [`KernelParam`]s.
pub trait KernelSignature: 'static {
    /// The tuple a launch takes: one [`KernelParam::Arg`] per parameter.
    type Args<'a>;

    /// The parameters' metadata requirements, in order.
    fn params() -> Vec<ParamSpec>;

    /// The arguments' addresses or bytes, in order.
    fn launch_args<'b>(args: &'b Self::Args<'_>) -> Vec<LaunchArg<'b>>;
}

macro_rules! signatures {
    ($($p:ident $a:ident),*) => {
        impl<$($p: KernelParam),*> KernelSignature for fn($($p),*) {
            type Args<'a> = ($($p::Arg<'a>,)*);

            fn params() -> Vec<ParamSpec> {
                vec![$($p::spec()),*]
            }

            #[allow(clippy::unused_unit, unused_variables)]
            fn launch_args<'b>(args: &'b Self::Args<'_>) -> Vec<LaunchArg<'b>> {
                let ($($a,)*) = args;
                vec![$($p::launch_arg($a)),*]
            }
        }
    };
}

signatures!();
signatures!(P1 a1);
signatures!(P1 a1, P2 a2);
signatures!(P1 a1, P2 a2, P3 a3);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5, P6 a6);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5, P6 a6, P7 a7);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5, P6 a6, P7 a7, P8 a8);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5, P6 a6, P7 a7, P8 a8, P9 a9);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5, P6 a6, P7 a7, P8 a8, P9 a9, P10 a10);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5, P6 a6, P7 a7, P8 a8, P9 a9, P10 a10, P11 a11);
signatures!(P1 a1, P2 a2, P3 a3, P4 a4, P5 a5, P6 a6, P7 a7, P8 a8, P9 a9, P10 a10, P11 a11, P12 a12);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code_object::{ArgValueKind, KernelArg, KernelMetadata};
    use crate::launch::{LaunchConfig, check_signature, pack_kernarg};

    type Mixed = fn(*const f32, *mut u8, u32, f64, bool, i16);

    #[test]
    fn parameter_specs_follow_the_rust_types() {
        let specs = <Mixed as KernelSignature>::params();
        let summary: Vec<(&str, ParamKind, u32)> = specs
            .iter()
            .map(|s| (s.rust_type, s.kind, s.size))
            .collect();
        assert_eq!(
            summary,
            [
                ("*const f32", ParamKind::Buffer, 8),
                ("*mut u8", ParamKind::Buffer, 8),
                ("u32", ParamKind::Value, 4),
                ("f64", ParamKind::Value, 8),
                ("bool", ParamKind::Value, 1),
                ("i16", ParamKind::Value, 2),
            ]
        );
        assert!(<fn() as KernelSignature>::params().is_empty());
    }

    fn bytes_of(args: &[LaunchArg<'_>]) -> Vec<Vec<u8>> {
        args.iter().map(|a| a.bytes().into_owned()).collect()
    }

    #[test]
    fn values_are_passed_as_little_endian_bytes() {
        let args = <fn(i16, bool, f32, u64) as KernelSignature>::launch_args(&(
            -2,
            true,
            1.0,
            0x0102_0304_0506_0708,
        ));
        assert_eq!(
            bytes_of(&args),
            [
                vec![0xfe, 0xff],
                vec![1],
                vec![0, 0, 0x80, 0x3f],
                vec![8, 7, 6, 5, 4, 3, 2, 1],
            ]
        );
    }

    #[test]
    fn small_integers_and_bools_keep_their_edge_values() {
        let args = <fn(i8, i8, u8, i16, u16, u16, bool, bool) as KernelSignature>::launch_args(&(
            i8::MIN,
            i8::MAX,
            u8::MAX,
            i16::MIN,
            u16::MAX,
            0,
            true,
            false,
        ));
        assert_eq!(
            bytes_of(&args),
            [
                vec![0x80],
                vec![0x7f],
                vec![0xff],
                vec![0x00, 0x80],
                vec![0xff, 0xff],
                vec![0, 0],
                vec![1],
                vec![0],
            ]
        );
        assert!(args.iter().all(|a| a.kind() == ParamKind::Value));
    }

    /// `struct { int a; double d; short e; signed char f; }` of hip_args.hip: 24 bytes with
    /// explicit padding.
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct S24 {
        a: i32,
        pad0: u32,
        d: f64,
        e: i16,
        f: i8,
        pad1: [u8; 5],
    }

    type Structs = fn(i16, ByValue<S24>, bool, ByValue<[u8; 12]>, ByValue<[u8; 3]>, *mut i64, i8);

    #[test]
    fn structs_pass_their_bytes_and_size() {
        let specs = <Structs as KernelSignature>::params();
        let sizes: Vec<(ParamKind, u32)> = specs.iter().map(|s| (s.kind, s.size)).collect();
        assert_eq!(
            sizes,
            [
                (ParamKind::Value, 2),
                (ParamKind::Value, 24),
                (ParamKind::Value, 1),
                (ParamKind::Value, 12),
                (ParamKind::Value, 3),
                (ParamKind::Buffer, 8),
                (ParamKind::Value, 1),
            ]
        );
        assert!(
            specs[1].rust_type.ends_with("S24"),
            "{}",
            specs[1].rust_type
        );
        let s = S24 {
            a: -7,
            pad0: 0,
            d: 2.5,
            e: i16::MIN,
            f: -1,
            pad1: [0; 5],
        };
        let arg = <ByValue<S24> as KernelParam>::launch_arg(&s);
        let mut want = Vec::new();
        want.extend_from_slice(&(-7i32).to_le_bytes());
        want.extend_from_slice(&[0; 4]);
        want.extend_from_slice(&2.5f64.to_le_bytes());
        want.extend_from_slice(&i16::MIN.to_le_bytes());
        want.extend_from_slice(&[0xff, 0, 0, 0, 0, 0]);
        assert_eq!(&*arg.bytes(), &want[..]);
        let odd = [1u8, 2, 3];
        assert_eq!(&*LaunchArg::pod(&odd).bytes(), &[1, 2, 3]);
        assert_eq!(ParamSpec::by_value::<[u8; 5]>().size, 5);
        assert_eq!(ParamSpec::by_value::<()>().size, 0);
    }

    #[test]
    fn addresses_are_eight_byte_values() {
        for spec in [
            <AddressOf<*const f32> as KernelParam>::spec(),
            <AddressOf<*mut u8> as KernelParam>::spec(),
        ] {
            assert_eq!((spec.kind, spec.size), (ParamKind::Value, 8));
            assert!(spec.rust_type.contains("AddressOf"), "{}", spec.rust_type);
        }
        assert_eq!(LaunchArg::value(&[1, 2, 3]).kind(), ParamKind::Value);
        assert_eq!(LaunchArg::Bytes(&[]).kind(), ParamKind::Value);
    }

    /// The metadata of hip_args.hip's `args_structs` (offsets and sizes as clang-22 lays them
    /// out), plus one hidden argument.
    fn structs_metadata() -> KernelMetadata {
        let arg = |offset, size| KernelArg::new(offset, size, ArgValueKind::ByValue);
        let args = vec![
            arg(0, 2),
            arg(8, 24),
            arg(32, 1),
            arg(36, 12),
            arg(48, 3),
            KernelArg::new(56, 8, ArgValueKind::GlobalBuffer),
            arg(64, 1),
            KernelArg::new(72, 4, ArgValueKind::HiddenBlockCountX),
        ];
        KernelMetadata::new("args_structs", args, 80)
    }

    #[test]
    fn struct_signatures_are_checked_against_the_metadata() {
        let metadata = structs_metadata();
        check_signature(&metadata, &<Structs as KernelSignature>::params()).unwrap();

        type Short =
            fn(i16, ByValue<[u8; 16]>, bool, ByValue<[u8; 12]>, ByValue<[u8; 3]>, *mut i64, i8);
        let e = check_signature(&metadata, &<Short as KernelSignature>::params()).unwrap_err();
        assert!(
            e.to_string().contains(
                "argument 2 of 7: the code object expects 24 bytes, the launch passes 16 bytes"
            ),
            "{e}"
        );
        type Wide = fn(u32, ByValue<S24>, bool, ByValue<[u8; 12]>, ByValue<[u8; 3]>, *mut i64, i8);
        let e = check_signature(&metadata, &<Wide as KernelSignature>::params()).unwrap_err();
        assert!(
            e.to_string()
                .contains("expects 2 bytes, the launch passes 4 bytes (u32)"),
            "{e}"
        );
        type Odd = fn(i16, ByValue<S24>, bool, ByValue<[u8; 12]>, ByValue<[u8; 4]>, *mut i64, i8);
        let e = check_signature(&metadata, &<Odd as KernelSignature>::params()).unwrap_err();
        assert!(
            e.to_string()
                .contains("argument 5 of 7: the code object expects 3 bytes"),
            "{e}"
        );
        type Address = fn(
            i16,
            ByValue<S24>,
            bool,
            ByValue<[u8; 12]>,
            ByValue<[u8; 3]>,
            AddressOf<*mut i64>,
            i8,
        );
        let e = check_signature(&metadata, &<Address as KernelSignature>::params()).unwrap_err();
        assert!(
            e.to_string().contains(
                "argument 6 of 7: the code object has a global_buffer argument, the launch passes"
            ) && e.to_string().contains("as by_value"),
            "{e}"
        );
        type Fewer = fn(i16, ByValue<S24>);
        let e = check_signature(&metadata, &<Fewer as KernelSignature>::params()).unwrap_err();
        assert!(e.to_string().contains("takes 7 arguments, got 2"), "{e}");
    }

    #[test]
    fn struct_bytes_land_at_their_offsets_with_zero_padding() {
        let metadata = structs_metadata();
        let mut rng_state = 0x9e37_79b9u32;
        let mut next = || {
            rng_state = rng_state
                .wrapping_mul(1_664_525)
                .wrapping_add(1_013_904_223);
            (rng_state >> 24) as u8
        };
        let s24: [u8; 24] = std::array::from_fn(|_| next());
        let s12: [u8; 12] = std::array::from_fn(|_| next());
        let s3 = [next(), next(), next()];
        let args = [
            LaunchArg::value(&i16::MIN.to_le_bytes()),
            LaunchArg::pod(&s24),
            LaunchArg::value(&[1]),
            LaunchArg::pod(&s12),
            LaunchArg::Bytes(&s3),
            LaunchArg::value(&0x1234_5678_9abc_def0u64.to_le_bytes()),
            LaunchArg::value(&[0x80]),
        ];
        let owned = bytes_of(&args);
        let slices: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let config = LaunchConfig::new([3, 1, 1], [64, 1, 1]);
        let segment = pack_kernarg(&metadata, &slices, &config).unwrap();
        let b = &segment.bytes;
        assert_eq!(&b[0..2], &[0x00, 0x80]);
        assert_eq!(&b[2..8], &[0; 6]);
        assert_eq!(&b[8..32], &s24);
        assert_eq!(b[32], 1);
        assert_eq!(&b[33..36], &[0; 3]);
        assert_eq!(&b[36..48], &s12);
        assert_eq!(&b[48..51], &s3);
        assert_eq!(&b[51..56], &[0; 5]);
        assert_eq!(&b[56..64], &0x1234_5678_9abc_def0u64.to_le_bytes());
        assert_eq!(b[64], 0x80);
        assert_eq!(&b[72..76], &3u32.to_le_bytes());

        let mut short = slices.clone();
        short[1] = &s24[..23];
        let e = pack_kernarg(&metadata, &short, &config).unwrap_err();
        assert!(
            e.to_string().contains(
                "argument 2 of 7: the code object expects 24 bytes, the launch passes 23 bytes"
            ),
            "{e}"
        );
    }

    /// hip_args.hip built for `gfx` (`IRON_EMU_TEST_OBJECTS`, built by `cargo xtask test`), or
    /// `None` after saying why the test is skipped; under `cargo xtask test`
    /// (`IRON_REQUIRE_TOOLS` set) a missing object fails.
    fn hip_args_object(file: &str) -> Option<Vec<u8>> {
        let path = std::env::var_os("IRON_EMU_TEST_OBJECTS")
            .map(|dir| std::path::PathBuf::from(dir).join(file));
        match path.map(std::fs::read) {
            Some(Ok(image)) => Some(image),
            _ => {
                assert!(
                    std::env::var_os("IRON_REQUIRE_TOOLS").is_none(),
                    "{file} is not in IRON_EMU_TEST_OBJECTS: `cargo xtask test` builds it"
                );
                eprintln!("skipped: {file} is not in IRON_EMU_TEST_OBJECTS");
                None
            }
        }
    }

    /// hip_args.hip's `S12 { unsigned char a; int b; unsigned short c; }`.
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct S12 {
        a: u8,
        pad0: [u8; 3],
        b: i32,
        c: u16,
        pad1: [u8; 2],
    }

    /// hip_args.hip's `S3 { signed char a; unsigned char b; bool c; }`.
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct S3 {
        a: i8,
        b: u8,
        c: u8,
    }

    /// HIP's default bounds, which clang records for a kernel without launch bounds.
    const HIP_BOUNDS: iron_intrinsics::launch::LaunchBounds =
        iron_intrinsics::launch::LaunchBounds {
            max_threads: 1024,
            min_waves_per_eu: 0,
            max_waves_per_eu: 0,
            allow_scratch: false,
        };

    #[test]
    fn typed_launches_pass_small_values_addresses_and_structs_to_hip_kernels() {
        use crate::emulator::Emulator;
        use crate::{DeviceBuffer, DeviceError, LaunchConfig};
        use iron_intrinsics::launch::KernelDecl;

        for (gfx, file) in [
            ("gfx942", "hip_args_preload_gfx942.co"),
            ("gfx1201", "hip_args_gfx1201.co"),
        ] {
            let Some(image) = hip_args_object(file) else {
                return;
            };
            let emulator = Emulator::new(gfx).unwrap();
            let device = emulator.device();
            let module = device.load_module(&image).unwrap();
            let stream = device.default_stream();
            let config = LaunchConfig::new([1, 1, 1], [64, 1, 1]);

            type Small = fn(i8, *mut i64, u8, i16, bool, u16, i8);
            let small = module
                .kernel(KernelDecl::<Small>::new("args_small", HIP_BOUNDS))
                .unwrap();
            let mut out = DeviceBuffer::<i64>::zeros(&device, 6).unwrap();
            for (c, uc, sh, b, us, last) in [
                (i8::MIN, u8::MAX, i16::MIN, true, u16::MAX, i8::MAX),
                (i8::MAX, 0, i16::MAX, false, 0, i8::MIN),
                (-3, 17, -1234, true, 40000, 0),
            ] {
                // SAFETY: args_small writes out[0..6], and out holds 6.
                unsafe {
                    stream
                        .launch(&small, config, (c, &mut out, uc, sh, b, us, last))
                        .unwrap()
                };
                assert_eq!(
                    out.to_vec().unwrap(),
                    [
                        c.into(),
                        uc.into(),
                        sh.into(),
                        b.into(),
                        us.into(),
                        last.into()
                    ],
                    "{gfx}"
                );
            }

            type Ptr = fn(u8, AddressOf<*const i32>, *mut u64, AddressOf<*mut i32>, usize);
            let ptr = module
                .kernel(KernelDecl::<Ptr>::new("args_ptr", HIP_BOUNDS))
                .unwrap();
            let src_values: Vec<i32> = (0..9).map(|i| i * 1000 - 4000).collect();
            let src = DeviceBuffer::from_slice(&device, &src_values).unwrap();
            let mut dst = DeviceBuffer::from_slice(&device, &[-1i32; 9]).unwrap();
            let mut out = DeviceBuffer::<u64>::zeros(&device, 4).unwrap();
            // SAFETY: args_ptr reads src[0..8] and writes dst[0..8] and out[0..4].
            unsafe {
                stream
                    .launch(&ptr, config, (5, &src, &mut out, &mut dst, 8))
                    .unwrap()
            };
            let mut want: Vec<i32> = src_values[..8].iter().map(|v| v * 2 + 5).collect();
            want.push(-1);
            assert_eq!(dst.to_vec().unwrap(), want, "{gfx}");
            assert_eq!(
                out.to_vec().unwrap(),
                [5, src.address(), dst.address(), 8],
                "{gfx}"
            );

            type Structs = fn(i16, ByValue<S24>, bool, ByValue<S12>, ByValue<S3>, *mut i64, i8);
            let structs = module
                .kernel(KernelDecl::<Structs>::new("args_structs", HIP_BOUNDS))
                .unwrap();
            let s24 = S24 {
                a: i32::MIN,
                pad0: 0xdead_beef,
                d: -1.5,
                e: -300,
                f: i8::MIN,
                pad1: [0xee; 5],
            };
            let s12 = S12 {
                a: 255,
                pad0: [0xaa; 3],
                b: 123_456_789,
                c: u16::MAX,
                pad1: [0xbb; 2],
            };
            let s3 = S3 {
                a: -1,
                b: 200,
                c: 1,
            };
            let mut out = DeviceBuffer::<i64>::zeros(&device, 13).unwrap();
            // SAFETY: args_structs writes out[0..13], and out holds 13.
            unsafe {
                stream
                    .launch(
                        &structs,
                        config,
                        (i16::MAX, s24, false, s12, s3, &mut out, -7),
                    )
                    .unwrap()
            };
            assert_eq!(
                out.to_vec().unwrap(),
                [
                    i16::MAX.into(),
                    i32::MIN.into(),
                    (-1.5f64).to_bits() as i64,
                    -300,
                    i8::MIN.into(),
                    0,
                    255,
                    123_456_789,
                    u16::MAX.into(),
                    -1,
                    200,
                    1,
                    -7,
                ],
                "{gfx}"
            );

            // The same struct kernel untyped: the metadata checks every size.
            let kernel = module.kernel_by_name("args_structs").unwrap();
            let short = [0u8; 11];
            let mut args = vec![
                LaunchArg::value(&1i16.to_le_bytes()),
                LaunchArg::pod(&s24),
                LaunchArg::value(&[1]),
                LaunchArg::pod(&short),
                LaunchArg::pod(&s3),
                LaunchArg::Buffer {
                    address: out.address(),
                    device: out.device(),
                },
                LaunchArg::value(&[2]),
            ];
            // SAFETY: refused before it runs.
            let e = unsafe { stream.launch_untyped(&kernel, config, &args) }.unwrap_err();
            assert!(
                e.to_string().contains(
                    "argument 4 of 7: the code object expects 12 bytes, the launch passes 11 bytes"
                ),
                "{e}"
            );
            args[3] = LaunchArg::pod(&s12);
            args[5] = LaunchArg::address_of(&out);
            // SAFETY: refused before it runs.
            let e = unsafe { stream.launch_untyped(&kernel, config, &args) }.unwrap_err();
            assert!(
                e.to_string().contains("argument 6 of 7: the code object has a global_buffer argument, the launch passes a buffer's address as by_value"),
                "{e}"
            );

            // A signature that disagrees with the metadata is refused when it is resolved.
            type WrongStruct =
                fn(i16, ByValue<[u8; 16]>, bool, ByValue<S12>, ByValue<S3>, *mut i64, i8);
            let e = module
                .kernel(KernelDecl::<WrongStruct>::new("args_structs", HIP_BOUNDS))
                .unwrap_err();
            assert!(
                e.to_string()
                    .contains("expects 24 bytes, the launch passes 16 bytes"),
                "{e}"
            );
            type PointerForAddress = fn(u8, *const i32, *mut u64, AddressOf<*mut i32>, usize);
            let e = module
                .kernel(KernelDecl::<PointerForAddress>::new("args_ptr", HIP_BOUNDS))
                .unwrap_err();
            assert!(
                e.to_string().contains("argument 2 of 5: the code object has a by_value argument, the launch passes *const i32 as global_buffer"),
                "{e}"
            );

            // An address of another device's buffer is refused like a buffer of another device.
            let other = Emulator::new(gfx).unwrap();
            let foreign = DeviceBuffer::from_slice(&other.device(), &[0i32; 4]).unwrap();
            let ptr_kernel = module.kernel_by_name("args_ptr").unwrap();
            let args = [
                LaunchArg::value(&[0]),
                LaunchArg::address_of(&foreign),
                LaunchArg::Buffer {
                    address: out.address(),
                    device: out.device(),
                },
                LaunchArg::address_of(&dst),
                LaunchArg::value(&0u64.to_le_bytes()),
            ];
            // SAFETY: refused before it runs.
            let e = unsafe { stream.launch_untyped(&ptr_kernel, config, &args) }.unwrap_err();
            assert!(matches!(e, DeviceError::DeviceMismatch { .. }), "{e}");
        }
    }
}
