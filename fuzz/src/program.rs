//! Fuzz inputs as emulator work: the target they run on and the instruction words they hold.
//!
//! Input layout, shared by the `decode` and `execute` targets: byte 0 picks the target (its value
//! modulo the number of targets) and, for RDNA, the wave size (bit 7 set: wave64); the rest are
//! little-endian instruction words.

use iron_emu::{Checks, Dispatch, EmuError, Gpu, KernelDescriptor, Target, WaveSize};

/// Most instruction words taken from one input (longer inputs are cut).
pub const MAX_WORDS: usize = 256;
/// Wave-instructions a fuzzed dispatch may run before it stops with a budget error.
pub const INSTRUCTION_BUDGET: u64 = 4_000;
/// Bytes of the data buffer whose address the kernel finds in its kernarg segment.
pub const DATA_BYTES: u64 = 4096;

/// `s_endpgm` of the GFX9 family.
const GFX9_ENDPGM: u32 = 0xbf81_0000;
/// `s_endpgm` of the RDNA family.
const RDNA_ENDPGM: u32 = 0xbfb0_0000;
/// Kernarg segment size of the fuzzed kernel.
const KERNARG_BYTES: usize = 64;

/// A fuzz input split into its target, wave size and instruction words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The GPU the words are decoded and run for.
    pub target: Target,
    /// Lanes per wave (always 64 on GFX9).
    pub wave: WaveSize,
    /// The instruction words, at most [`MAX_WORDS`].
    pub words: Vec<u32>,
}

impl Program {
    /// Splits an input; `None` when it is empty.
    pub fn from_input(data: &[u8]) -> Option<Program> {
        let (&selector, rest) = data.split_first()?;
        let target = Target::ALL[usize::from(selector & 0x7f) % Target::ALL.len()];
        let wave = if target.is_rdna() && selector & 0x80 == 0 {
            WaveSize::Wave32
        } else {
            WaveSize::Wave64
        };
        let words = rest
            .chunks_exact(4)
            .take(MAX_WORDS)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        Some(Program {
            target,
            wave,
            words,
        })
    }

    /// The input that [`from_input`](Program::from_input) turns into this program.
    pub fn to_input(&self) -> Vec<u8> {
        let index = Target::ALL
            .iter()
            .position(|&t| t == self.target)
            .expect("Target::ALL lists every target") as u8;
        let wave_bit = if self.wave == WaveSize::Wave64 && self.target.is_rdna() {
            0x80
        } else {
            0
        };
        let mut out = vec![index | wave_bit];
        out.extend(self.words.iter().flat_map(|w| w.to_le_bytes()));
        out
    }

    /// Decodes the words from the first one on, instruction by instruction (a word that does not
    /// decode is skipped), and disassembles each decoded instruction. Checks that a decoded
    /// instruction's length is whole words, never more than it was given, and that every
    /// disassembly is non-empty.
    pub fn decode_all(&self) {
        let mut at = 0;
        while at < self.words.len() {
            let words = &self.words[at..];
            let (len, text) = if self.target.is_rdna() {
                match iron_emu::rdna::decode(self.target, self.wave, words) {
                    Ok(inst) => (inst.len, iron_emu::rdna::disassemble(self.target, &inst)),
                    Err(e) => (4, e.to_string()),
                }
            } else {
                match iron_emu::gfx9::decode(self.target, words) {
                    Ok(inst) => (inst.len, iron_emu::gfx9::disassemble(self.target, &inst)),
                    Err(e) => (4, e.to_string()),
                }
            };
            assert!(
                len % 4 == 0 && (1..=words.len()).contains(&(usize::from(len) / 4)),
                "{}: a {len}-byte instruction decoded from {} words",
                self.target,
                words.len()
            );
            assert!(!text.is_empty(), "{}: empty disassembly", self.target);
            at += usize::from(len) / 4;
        }
    }

    /// Runs the words, followed by `s_endpgm`, as a kernel of two 64-work-item workgroups with
    /// 1 KiB of LDS, 64 bytes of scratch per lane, and a kernarg segment holding the address of
    /// a [`DATA_BYTES`]-byte buffer (twice) and its size, under [`INSTRUCTION_BUDGET`], with
    /// every check but the racecheck on global memory: both workgroups run the same words on
    /// the same buffer, so nearly every program would stop at its first access the other
    /// workgroup also made.
    pub fn execute(&self) -> Result<(), EmuError> {
        let mut words = self.words.clone();
        words.push(if self.target.is_rdna() {
            RDNA_ENDPGM
        } else {
            GFX9_ENDPGM
        });
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut gpu = Gpu::new(self.target);
        gpu.set_instruction_budget(INSTRUCTION_BUDGET);
        gpu.set_checks(Checks {
            global_races: false,
            ..Checks::ALL
        });
        let base = gpu.memory_mut().alloc(code.len() as u64, 4096)?;
        gpu.memory_mut().write(base, &code)?;
        let code_id = gpu.load_code(&code, base);
        let data = gpu.memory_mut().alloc(DATA_BYTES, 256)?;
        // Zeros the host wrote: a program's reads of its buffer are not initcheck faults.
        gpu.memory_mut().write(data, &[0; DATA_BYTES as usize])?;
        let mut kernarg = [0u8; KERNARG_BYTES];
        kernarg[0..8].copy_from_slice(&data.to_le_bytes());
        kernarg[8..16].copy_from_slice(&data.to_le_bytes());
        kernarg[16..24].copy_from_slice(&DATA_BYTES.to_le_bytes());
        let dispatch = Dispatch {
            kernel_name: "fuzzed",
            code: code_id,
            entry: base,
            descriptor: self.descriptor(),
            kernarg: &kernarg,
            grid: [2, 1, 1],
            workgroup_size: [64, 1, 1],
            dynamic_lds: 0,
            buffers: None,
        };
        gpu.dispatch(&dispatch).map(|_| ())
    }

    /// A valid descriptor: kernarg pointer in s[0:1] (GFX9 also gets the private segment
    /// buffer), workgroup id x, work-item ids x/y/z, scratch enabled.
    fn descriptor(&self) -> KernelDescriptor {
        let (rsrc2, properties) = if self.target.is_rdna() {
            let wave32 = u16::from(self.wave == WaveSize::Wave32);
            (1 | 2 << 1 | 1 << 7 | 2 << 11, 1 << 3 | wave32 << 10)
        } else {
            (1 | 6 << 1 | 1 << 7 | 2 << 11, 1 | 1 << 3)
        };
        KernelDescriptor {
            group_segment_fixed_size: 1024,
            private_segment_fixed_size: 64,
            kernarg_size: KERNARG_BYTES as u32,
            compute_pgm_rsrc1: 3 << 16 | 3 << 18 | 1 << 23,
            compute_pgm_rsrc2: rsrc2,
            kernel_code_properties: properties,
            ..Default::default()
        }
    }
}
