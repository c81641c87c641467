//! Dequantization of block-scaled tensors to f32 (`device/kernels/src/dequant.rs`): every block
//! format of `iron_quant` (MXFP4, MXFP6 E2M3/E3M2, MXFP8 E4M3/E5M2, MXINT8, NVFP4), decoded on
//! the device by the same functions the host packer is tested against. Each work-item decodes
//! the units of 16 elements whose codes fill whole 16-byte loads (32 elements of FP4 and NVFP4,
//! 64 of FP6, 16 of FP8 and INT8: [`iron_kernels::dequant::units_per_workitem`]) per step, and
//! the grid has one work-item per such step of the tensor, up to the streaming cap.
//!
//! A [`DeviceQuantizedTensor`] is the device copy of an [`iron_quant::host::QuantizedTensor`]:
//! its packed element codes and scale codes in two byte buffers, with its shape and tensor scale.

use std::fmt;
use std::marker::PhantomData;

use iron_quant::host::QuantizedTensor;
use iron_quant::{ElementFormat, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4};

use super::Library;
use super::error::LibraryError;
use super::geometry::{STREAMING_BLOCK, check_holds, elements_of, streaming, to_u32};
use crate::device::{Device, DeviceBuffer, DeviceError, Stream};
use crate::launch::LaunchConfig;

/// A block format [`Library::dequant`] decodes: one of `iron_quant`'s seven.
pub trait DequantFormat: iron_quant::BlockFormat + sealed::DequantKernel {}

impl DequantFormat for MxFp4 {}
impl DequantFormat for MxFp6E2M3 {}
impl DequantFormat for MxFp6E3M2 {}
impl DequantFormat for MxFp8E4M3 {}
impl DequantFormat for MxFp8E5M2 {}
impl DequantFormat for MxInt8 {}
impl DequantFormat for Nvfp4 {}

/// A row-major `[rows, cols]` tensor in block format `B` in device memory: `elements` holds the
/// packed codes of every block back to back (`B::BLOCK_BYTES` each), `scales` one scale code per
/// block, as [`QuantizedTensor`] lays them out.
pub struct DeviceQuantizedTensor<B> {
    rows: usize,
    cols: usize,
    elements: DeviceBuffer<u8>,
    scales: DeviceBuffer<u8>,
    tensor_scale: f32,
    format: PhantomData<B>,
}

impl<B: DequantFormat> DeviceQuantizedTensor<B> {
    /// Copies a host tensor to `device`.
    pub fn upload(
        device: &Device,
        tensor: &QuantizedTensor<B>,
    ) -> Result<DeviceQuantizedTensor<B>, LibraryError> {
        DeviceQuantizedTensor::from_parts(
            tensor.rows(),
            tensor.cols(),
            DeviceBuffer::from_slice(device, tensor.elements())?,
            DeviceBuffer::from_slice(device, tensor.scales())?,
            tensor.tensor_scale(),
        )
    }

    /// A tensor from buffers already on the device, checking them against the shape: `cols` a
    /// multiple of the block length, `elements` holding at least `B::BLOCK_BYTES` bytes per
    /// block and `scales` at least one code per block.
    pub fn from_parts(
        rows: usize,
        cols: usize,
        elements: DeviceBuffer<u8>,
        scales: DeviceBuffer<u8>,
        tensor_scale: f32,
    ) -> Result<DeviceQuantizedTensor<B>, LibraryError> {
        const OP: &str = "DeviceQuantizedTensor::from_parts";
        if !cols.is_multiple_of(B::BLOCK_LEN) {
            return Err(LibraryError::BadShape {
                operation: OP,
                detail: format!(
                    "{} needs cols to be a multiple of its block length {}, got {cols}",
                    B::NAME,
                    B::BLOCK_LEN
                ),
            });
        }
        let blocks = elements_of(OP, rows, cols)? / B::BLOCK_LEN;
        check_holds(
            OP,
            "elements",
            &elements,
            "blocks * block bytes",
            blocks * B::BLOCK_BYTES,
        )?;
        check_holds(OP, "scales", &scales, "blocks", blocks)?;
        Ok(DeviceQuantizedTensor {
            rows,
            cols,
            elements,
            scales,
            tensor_scale,
            format: PhantomData,
        })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns (elements per row).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Blocks: `rows * cols / B::BLOCK_LEN`.
    pub fn blocks(&self) -> usize {
        self.rows * self.cols / B::BLOCK_LEN
    }

    /// The packed element codes.
    pub fn elements(&self) -> &DeviceBuffer<u8> {
        &self.elements
    }

    /// The scale codes, one per block.
    pub fn scales(&self) -> &DeviceBuffer<u8> {
        &self.scales
    }

    /// The per-tensor scale (1.0 for the MX formats, which have none).
    pub fn tensor_scale(&self) -> f32 {
        self.tensor_scale
    }

    /// The buffers `(elements, scales)`, consuming the tensor.
    pub fn into_parts(self) -> (DeviceBuffer<u8>, DeviceBuffer<u8>) {
        (self.elements, self.scales)
    }
}

impl<B: DequantFormat> fmt::Debug for DeviceQuantizedTensor<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceQuantizedTensor")
            .field("format", &B::NAME)
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("tensor_scale", &self.tensor_scale)
            .finish()
    }
}

pub(crate) mod sealed {
    use super::*;

    /// How a format's kernel is launched.
    pub trait DequantKernel: Sized {
        /// Launches the format's kernel over `blocks` blocks of `tensor` into `out`.
        ///
        /// # Safety
        /// `tensor` must hold `blocks` blocks (its constructor checks that it holds all of its
        /// own), `out` at least `blocks * BLOCK_LEN` elements, and the tensor's 16-element
        /// units plus the grid's work-items must stay below 2^32.
        unsafe fn launch(
            library: &Library,
            stream: &Stream,
            config: LaunchConfig,
            tensor: &DeviceQuantizedTensor<Self>,
            out: &mut DeviceBuffer<f32>,
            blocks: u32,
        ) -> Result<(), DeviceError>;
    }

    macro_rules! mx_formats {
        ($($format:ty => $kernel:ident),* $(,)?) => {$(
            impl DequantKernel for $format {
                unsafe fn launch(
                    library: &Library,
                    stream: &Stream,
                    config: LaunchConfig,
                    tensor: &DeviceQuantizedTensor<Self>,
                    out: &mut DeviceBuffer<f32>,
                    blocks: u32,
                ) -> Result<(), DeviceError> {
                    let kernel = &library.kernels.dequant.$kernel;
                    let args = (&tensor.elements, &tensor.scales, out, blocks);
                    // SAFETY: as the caller guarantees.
                    unsafe { stream.launch(kernel, config, args) }
                }
            }
        )*};
    }

    mx_formats!(
        MxFp4 => mxfp4,
        MxFp6E2M3 => mxfp6_e2m3,
        MxFp6E3M2 => mxfp6_e3m2,
        MxFp8E4M3 => mxfp8_e4m3,
        MxFp8E5M2 => mxfp8_e5m2,
        MxInt8 => mxint8,
    );

    impl DequantKernel for Nvfp4 {
        unsafe fn launch(
            library: &Library,
            stream: &Stream,
            config: LaunchConfig,
            tensor: &DeviceQuantizedTensor<Self>,
            out: &mut DeviceBuffer<f32>,
            blocks: u32,
        ) -> Result<(), DeviceError> {
            let kernel = &library.kernels.dequant.nvfp4;
            let args = (
                &tensor.elements,
                &tensor.scales,
                tensor.tensor_scale,
                out,
                blocks,
            );
            // SAFETY: as the caller guarantees.
            unsafe { stream.launch(kernel, config, args) }
        }
    }
}

/// Elements in one unit of the dequantization kernels.
const UNIT: usize = 16;

/// Work-items the dequantization kernels want for a tensor of `elements` elements of format
/// `B`: one per step of [`iron_kernels::dequant::units_per_workitem`] units.
pub(super) fn workitems<B: DequantFormat>(elements: usize) -> usize {
    let per_item = UNIT * iron_kernels::dequant::units_per_workitem(B::Element::BITS);
    elements.div_ceil(per_item)
}

/// The launch of a dequantization kernel over a tensor of `elements` elements of format `B`,
/// checking that its units plus the grid's work-items stay below 2^32 (the kernel indexes them
/// in 32 bits).
pub(super) fn dequant_launch<B: DequantFormat>(
    library: &Library,
    operation: &'static str,
    elements: usize,
) -> Result<LaunchConfig, LibraryError> {
    let config = streaming(library.device().properties(), workitems::<B>(elements));
    let threads = config.grid[0].saturating_mul(STREAMING_BLOCK);
    to_u32(
        operation,
        "rows * cols / 16",
        elements / UNIT,
        u32::MAX.saturating_sub(threads),
    )?;
    Ok(config)
}

impl Library {
    /// Decodes `tensor` into `out` as row-major `[rows, cols]` f32 (`out` holds at least
    /// `rows * cols` elements): `element * scale` per block, times the tensor scale for NVFP4.
    pub fn dequant<B: DequantFormat>(
        &self,
        stream: &Stream,
        tensor: &DeviceQuantizedTensor<B>,
        out: &mut DeviceBuffer<f32>,
    ) -> Result<(), LibraryError> {
        const OP: &str = "dequant";
        let elements = tensor.rows * tensor.cols;
        check_holds(OP, "out", out, "rows * cols", elements)?;
        let blocks = tensor.blocks();
        if blocks == 0 {
            return Ok(());
        }
        let config = dequant_launch::<B>(self, OP, elements)?;
        let count = to_u32(OP, "blocks", blocks, u32::MAX)?;
        // SAFETY: the tensor's constructor checked that its buffers hold all `blocks` blocks and
        // their scale codes (start 16-byte aligned, as device allocations do); out holds
        // blocks * BLOCK_LEN = rows * cols elements and is distinct from them; the tensor's
        // 16-element units plus the grid's work-items stay below 2^32, as checked.
        unsafe { B::launch(self, stream, config, tensor, out, count)? };
        Ok(())
    }
}
