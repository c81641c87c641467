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
//!
//! so `fn(*const f32, *const f32, *mut f32, u32)` takes
//! `(&DeviceBuffer<f32>, &DeviceBuffer<f32>, &mut DeviceBuffer<f32>, u32)`. A mismatch is a
//! compile error; kinds and sizes are checked against the metadata once, when the typed kernel
//! is resolved. Other by-value types can implement [`KernelParam`].

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

/// One argument of a launch, as the launch code sees it.
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
}

impl LaunchArg<'_> {
    /// A value argument from its little-endian bytes (at most 8).
    pub fn value(le_bytes: &[u8]) -> LaunchArg<'static> {
        let mut bytes = [0u8; 8];
        let len = le_bytes.len().min(8);
        bytes[..len].copy_from_slice(&le_bytes[..len]);
        LaunchArg::Value { bytes, len }
    }

    /// The bytes the argument occupies in the kernarg segment.
    pub fn bytes(&self) -> ([u8; 8], usize) {
        match *self {
            LaunchArg::Buffer { address, .. } => (address.to_le_bytes(), 8),
            LaunchArg::Value { bytes, len } => (bytes, len),
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

    #[test]
    fn values_are_passed_as_little_endian_bytes() {
        let args = <fn(i16, bool, f32, u64) as KernelSignature>::launch_args(&(
            -2,
            true,
            1.0,
            0x0102_0304_0506_0708,
        ));
        let bytes: Vec<Vec<u8>> = args
            .iter()
            .map(|a| {
                let (bytes, len) = a.bytes();
                bytes[..len].to_vec()
            })
            .collect();
        assert_eq!(
            bytes,
            [
                vec![0xfe, 0xff],
                vec![1],
                vec![0, 0, 0x80, 0x3f],
                vec![8, 7, 6, 5, 4, 3, 2, 1],
            ]
        );
    }
}
