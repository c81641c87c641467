//! Typed device memory that frees itself.

use std::fmt;
use std::marker::PhantomData;

use bytemuck::Pod;

use super::Device;
use super::backend::DeviceAddress;
use super::error::DeviceError;

/// `len` elements of `T` in device memory, freed on drop.
///
/// Copies between host and device are synchronous and length-checked: a host slice of another
/// length is an error, not a partial copy. They wait for work queued before them on any stream,
/// so a buffer read after a launch sees the kernel's writes. An empty buffer owns no memory and
/// has address 0.
pub struct DeviceBuffer<T> {
    device: Device,
    address: DeviceAddress,
    len: usize,
    element: PhantomData<T>,
}

impl<T: Pod> DeviceBuffer<T> {
    /// Allocates `len` elements whose contents are unspecified (any bit pattern is a valid `T`).
    pub fn alloc(device: &Device, len: usize) -> Result<DeviceBuffer<T>, DeviceError> {
        let bytes = len
            .checked_mul(size_of::<T>())
            .ok_or(DeviceError::TooLarge {
                len,
                element_size: size_of::<T>(),
            })?;
        let address = if bytes == 0 {
            0
        } else {
            device.backend().alloc(bytes as u64)?
        };
        Ok(DeviceBuffer {
            device: device.clone(),
            address,
            len,
            element: PhantomData,
        })
    }

    /// Allocates `len` elements, all bytes zero.
    pub fn zeros(device: &Device, len: usize) -> Result<DeviceBuffer<T>, DeviceError> {
        let mut buffer = DeviceBuffer::alloc(device, len)?;
        buffer.zero()?;
        Ok(buffer)
    }

    /// Allocates a buffer holding a copy of `data`.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<DeviceBuffer<T>, DeviceError> {
        let mut buffer = DeviceBuffer::alloc(device, data.len())?;
        buffer.copy_from_slice(data)?;
        Ok(buffer)
    }

    /// Overwrites the buffer with `src`, which must have exactly [`len`](Self::len) elements.
    pub fn copy_from_slice(&mut self, src: &[T]) -> Result<(), DeviceError> {
        self.check_len("copy_from_slice", src.len())?;
        if self.size_bytes() > 0 {
            self.device
                .backend()
                .write(self.address, bytemuck::cast_slice(src))?;
        }
        Ok(())
    }

    /// Copies the buffer into `dst`, which must have exactly [`len`](Self::len) elements.
    pub fn copy_to_slice(&self, dst: &mut [T]) -> Result<(), DeviceError> {
        self.check_len("copy_to_slice", dst.len())?;
        if self.size_bytes() > 0 {
            self.device
                .backend()
                .read(self.address, bytemuck::cast_slice_mut(dst))?;
        }
        Ok(())
    }

    /// The buffer's contents.
    pub fn to_vec(&self) -> Result<Vec<T>, DeviceError> {
        let mut out = vec![T::zeroed(); self.len];
        self.copy_to_slice(&mut out)?;
        Ok(out)
    }

    /// Sets every byte to zero.
    pub fn zero(&mut self) -> Result<(), DeviceError> {
        if self.size_bytes() > 0 {
            self.device
                .backend()
                .fill(self.address, 0, self.size_bytes() as u64)?;
        }
        Ok(())
    }

    pub(crate) fn check_len(
        &self,
        operation: &'static str,
        host: usize,
    ) -> Result<(), DeviceError> {
        if host != self.len {
            return Err(DeviceError::LengthMismatch {
                operation,
                buffer: self.len,
                host,
            });
        }
        Ok(())
    }
}

impl<T> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// Device address of the first element (0 for an empty buffer), as kernels see it.
    pub fn address(&self) -> DeviceAddress {
        self.address
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.address != 0 {
            // A failure to free cannot be reported from drop; the allocation then stays until
            // the device goes away.
            let _ = self.device.backend().free(self.address);
        }
    }
}

impl<T> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("address", &format_args!("0x{:x}", self.address))
            .finish()
    }
}
