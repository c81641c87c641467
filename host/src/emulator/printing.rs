//! Device printing on the emulator: a kernel whose metadata asks for a printf buffer gets one,
//! as the HIP runtime gives it, and its output is decoded after the dispatch and sent to the
//! emulator's print sink (stdout unless [`Emulator::set_print_sink`](super::Emulator::set_print_sink)
//! says otherwise).

use iron_emu::Gpu;

use crate::code_object::{ArgValueKind, KernelMetadata};
use crate::device::DeviceAddress;
use crate::print::{self, DEFAULT_BUFFER_BYTES, HEADER_BYTES, PrintBuffer, PrintOutput};

/// Where an emulator sends what kernels print.
pub type PrintSink = Box<dyn FnMut(&str) + Send>;

/// The smallest printf buffer an emulator accepts: the header and one short frame.
pub const MIN_PRINT_BUFFER_BYTES: usize = 64;

/// The emulator's printf buffer and where its output goes.
pub(super) struct Printer {
    /// The buffer, once a printing kernel has run.
    buffer: Option<DeviceAddress>,
    /// Its size (and the size of the next one allocated).
    bytes: usize,
    sink: Option<PrintSink>,
}

impl Printer {
    pub(super) fn new() -> Printer {
        Printer {
            buffer: None,
            bytes: DEFAULT_BUFFER_BYTES,
            sink: None,
        }
    }

    pub(super) fn set_sink(&mut self, sink: PrintSink) {
        self.sink = Some(sink);
    }

    /// Sets the size of the buffer the following launches get; the current one is given back
    /// to `gpu`'s memory.
    pub(super) fn set_bytes(&mut self, gpu: &mut Gpu, bytes: usize) {
        if let Some(buffer) = self.buffer.take() {
            // The buffer was allocated here and is freed once; a failure leaves it allocated.
            let _ = gpu.memory_mut().free(buffer);
        }
        self.bytes = bytes.max(MIN_PRINT_BUFFER_BYTES);
    }

    /// Gives a kernel that prints an empty buffer: its address goes into `kernarg` where the
    /// metadata's `hidden_printf_buffer` lies. `None` for a kernel that does not print.
    pub(super) fn prepare(
        &mut self,
        gpu: &mut Gpu,
        metadata: &KernelMetadata,
        kernarg: &mut [u8],
    ) -> Result<Option<DeviceAddress>, String> {
        let Some(arg) = metadata
            .args
            .iter()
            .find(|arg| arg.value_kind == ArgValueKind::HiddenPrintfBuffer)
        else {
            return Ok(None);
        };
        let at = arg.offset as usize;
        let slot = kernarg.get_mut(at..at + 8).ok_or_else(|| {
            format!("hidden_printf_buffer at byte {at} is outside the kernarg segment")
        })?;
        let buffer = match self.buffer {
            Some(buffer) => buffer,
            None => {
                let buffer = gpu
                    .memory_mut()
                    .alloc(self.bytes as u64, 256)
                    .map_err(|e| {
                        format!("cannot allocate a {}-byte printf buffer: {e}", self.bytes)
                    })?;
                self.buffer = Some(buffer);
                buffer
            }
        };
        gpu.memory_mut()
            .write(buffer, &PrintBuffer::header(self.bytes))
            .map_err(|e| format!("cannot write the printf buffer's header: {e}"))?;
        slot.copy_from_slice(&buffer.to_le_bytes());
        Ok(Some(buffer))
    }

    /// Decodes what the dispatch printed into `buffer` with the code object's constant formats
    /// and sends it to the sink.
    pub(super) fn finish(
        &mut self,
        gpu: &Gpu,
        buffer: DeviceAddress,
        formats: &[String],
    ) -> PrintOutput {
        let mut header = [0; HEADER_BYTES];
        let mut output = match gpu.memory().read(buffer, &mut header) {
            Ok(()) => {
                let mut bytes = vec![0; PrintBuffer::used(&header).min(self.bytes)];
                match gpu.memory().read(buffer, &mut bytes) {
                    Ok(()) => print::decode(&bytes, formats),
                    Err(e) => corrupt(format!("cannot read the printf buffer: {e}")),
                }
            }
            Err(e) => corrupt(format!("cannot read the printf buffer: {e}")),
        };
        if let Some(problem) = &output.corrupt {
            output.text.push_str(&format!("iron: {problem}\n"));
        }
        if !output.text.is_empty() {
            match self.sink.as_mut() {
                Some(sink) => sink(&output.text),
                None => {
                    use std::io::Write;
                    let mut stdout = std::io::stdout().lock();
                    // Like the HIP runtime's printf, output that stdout refuses is lost.
                    let _ = stdout.write_all(output.text.as_bytes());
                    let _ = stdout.flush();
                }
            }
        }
        output
    }
}

fn corrupt(problem: String) -> PrintOutput {
    PrintOutput {
        corrupt: Some(problem),
        ..PrintOutput::default()
    }
}
