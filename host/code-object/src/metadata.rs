//! The AMDGPU metadata note: a msgpack map describing every kernel of a code object.
//!
//! Layout and required keys follow LLVM AMDGPUUsage, "Code Object V3 to V6 Metadata", and the
//! checks of LLVM's `AMDGPUMetadataVerifier`: the root map holds `amdhsa.version` (two
//! integers), `amdhsa.target` and `amdhsa.kernels`; each kernel map holds `.name`, `.symbol`,
//! `.kernarg_segment_size`, `.kernarg_segment_align`, `.group_segment_fixed_size`,
//! `.private_segment_fixed_size`, `.wavefront_size`, `.sgpr_count`, `.vgpr_count` and
//! `.max_flat_workgroup_size`; each argument map holds `.size`, `.offset` and `.value_kind`.

use rmpv::ValueRef;

use super::error::{CodeObjectError, Result};

/// Nesting depth the decoder accepts; real metadata nests about five levels.
const MAX_MSGPACK_DEPTH: usize = 64;

/// The decoded metadata note of one code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObjectMetadata {
    /// `amdhsa.version`: metadata format major and minor version (1.2 for code object v5).
    pub version: [u32; 2],
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx950`, when present.
    pub target: Option<String>,
    /// `amdhsa.kernels`, in note order.
    pub kernels: Vec<KernelMetadata>,
    /// `amdhsa.printf`: the constant printf formats of the code object's kernels, each
    /// `0:0:<64-bit hash in hex>,<format>` (empty when no kernel prints).
    pub printf: Vec<String>,
}

/// What the compiler recorded about one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMetadata {
    /// Kernel name (`.name`).
    pub name: String,
    /// Kernel descriptor symbol (`.symbol`), normally `<name>.kd`.
    pub symbol: String,
    /// Kernel arguments, explicit and hidden, in kernarg order (`.args`).
    pub args: Vec<KernelArg>,
    /// Bytes of kernarg segment the dispatch must provide (`.kernarg_segment_size`).
    pub kernarg_segment_size: u32,
    /// Alignment of the kernarg segment in bytes (`.kernarg_segment_align`).
    pub kernarg_segment_align: u32,
    /// Static LDS bytes per workgroup (`.group_segment_fixed_size`).
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item (`.private_segment_fixed_size`).
    pub private_segment_fixed_size: u32,
    /// Wave size the kernel was compiled for: 32 or 64 (`.wavefront_size`).
    pub wavefront_size: u32,
    /// SGPRs per wave, including VCC, flat scratch and XNACK registers (`.sgpr_count`).
    pub sgpr_count: u32,
    /// VGPRs per lane (`.vgpr_count`); on gfx90a+ this includes the AGPRs.
    pub vgpr_count: u32,
    /// AGPRs per lane (`.agpr_count`), when the target has them.
    pub agpr_count: Option<u32>,
    /// Scalar registers spilled to memory (`.sgpr_spill_count`).
    pub sgpr_spill_count: Option<u32>,
    /// Vector registers spilled to scratch (`.vgpr_spill_count`).
    pub vgpr_spill_count: Option<u32>,
    /// Largest workgroup (in work-items) the kernel was compiled for
    /// (`.max_flat_workgroup_size`).
    pub max_flat_workgroup_size: u32,
    /// Whether the kernel's stack size is unknown at compile time (`.uses_dynamic_stack`).
    pub uses_dynamic_stack: Option<bool>,
    /// Workgroup size the kernel requires, when it requires one (`.reqd_workgroup_size`).
    pub reqd_workgroup_size: Option<[u32; 3]>,
}

impl KernelMetadata {
    /// Metadata for a kernel built by hand (tests, tools that describe a kernel themselves):
    /// `name`, its `.kd` symbol, `args` and the kernarg size, for a wave64 kernel of up to 1024
    /// work-items with no LDS, scratch or spills and 16 SGPRs and 8 VGPRs. Change fields with
    /// struct update syntax.
    ///
    /// ```
    /// use iron_code_object::{ArgValueKind, KernelArg, KernelMetadata};
    /// let m = KernelMetadata::new("k", vec![KernelArg::new(0, 8, ArgValueKind::GlobalBuffer)], 8);
    /// assert_eq!(m.symbol, "k.kd");
    /// assert_eq!(m.explicit_args().count(), 1);
    /// ```
    pub fn new(name: &str, args: Vec<KernelArg>, kernarg_segment_size: u32) -> KernelMetadata {
        KernelMetadata {
            name: name.to_string(),
            symbol: format!("{name}.kd"),
            args,
            kernarg_segment_size,
            kernarg_segment_align: 8,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            wavefront_size: 64,
            sgpr_count: 16,
            vgpr_count: 8,
            agpr_count: None,
            sgpr_spill_count: None,
            vgpr_spill_count: None,
            max_flat_workgroup_size: 1024,
            uses_dynamic_stack: None,
            reqd_workgroup_size: None,
        }
    }

    /// The arguments the caller passes (those whose kind is not `hidden_*`).
    pub fn explicit_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|arg| !arg.value_kind.is_hidden())
    }
}

/// One kernel argument (`.args[i]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    /// Byte offset in the kernarg segment (`.offset`).
    pub offset: u32,
    /// Size in bytes (`.size`).
    pub size: u32,
    /// What the argument is (`.value_kind`).
    pub value_kind: ArgValueKind,
    /// Address space a pointer argument points into (`.address_space`).
    pub address_space: Option<AddressSpace>,
    /// Source-level name (`.name`).
    pub name: Option<String>,
    /// Source-level type name (`.type_name`).
    pub type_name: Option<String>,
    /// How the kernel accesses the memory behind a pointer (`.actual_access`).
    pub actual_access: Option<Access>,
    /// Alignment of the pointee of a `dynamic_shared_pointer` (`.pointee_align`).
    pub pointee_align: Option<u32>,
}

impl KernelArg {
    /// An argument of `size` bytes at `offset`, of kind `value_kind`, with none of the optional
    /// fields (change them with struct update syntax).
    pub fn new(offset: u32, size: u32, value_kind: ArgValueKind) -> KernelArg {
        KernelArg {
            offset,
            size,
            value_kind,
            address_space: None,
            name: None,
            type_name: None,
            actual_access: None,
            pointee_align: None,
        }
    }
}

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this reader does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// Maps the metadata string to a variant (`Other` for unknown strings).
            pub fn parse(text: &str) -> $name {
                match text {
                    $($text => $name::$variant,)*
                    other => $name::Other(other.to_owned()),
                }
            }

            /// The metadata string of this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Other(text) => text,
                }
            }
        }
    };
}

string_enum! {
    /// `.value_kind` of a kernel argument (AMDGPUUsage, kernel argument metadata tables).
    ArgValueKind {
        /// Passed by value in the kernarg segment.
        ByValue = "by_value",
        /// A pointer to global memory.
        GlobalBuffer = "global_buffer",
        /// A pointer to dynamically allocated LDS.
        DynamicSharedPointer = "dynamic_shared_pointer",
        /// An image sampler handle.
        Sampler = "sampler",
        /// An image handle.
        Image = "image",
        /// An OpenCL pipe.
        Pipe = "pipe",
        /// A device queue.
        Queue = "queue",
        /// Number of workgroups in X (v5).
        HiddenBlockCountX = "hidden_block_count_x",
        /// Number of workgroups in Y (v5).
        HiddenBlockCountY = "hidden_block_count_y",
        /// Number of workgroups in Z (v5).
        HiddenBlockCountZ = "hidden_block_count_z",
        /// Workgroup size in X (v5).
        HiddenGroupSizeX = "hidden_group_size_x",
        /// Workgroup size in Y (v5).
        HiddenGroupSizeY = "hidden_group_size_y",
        /// Workgroup size in Z (v5).
        HiddenGroupSizeZ = "hidden_group_size_z",
        /// Size of the last, partial workgroup in X (v5).
        HiddenRemainderX = "hidden_remainder_x",
        /// Size of the last, partial workgroup in Y (v5).
        HiddenRemainderY = "hidden_remainder_y",
        /// Size of the last, partial workgroup in Z (v5).
        HiddenRemainderZ = "hidden_remainder_z",
        /// Global offset in X.
        HiddenGlobalOffsetX = "hidden_global_offset_x",
        /// Global offset in Y.
        HiddenGlobalOffsetY = "hidden_global_offset_y",
        /// Global offset in Z.
        HiddenGlobalOffsetZ = "hidden_global_offset_z",
        /// Grid dimensionality, 1 to 3 (v5).
        HiddenGridDims = "hidden_grid_dims",
        /// Padding: nothing is read.
        HiddenNone = "hidden_none",
        /// Pointer to the printf buffer.
        HiddenPrintfBuffer = "hidden_printf_buffer",
        /// Pointer to the hostcall buffer.
        HiddenHostcallBuffer = "hidden_hostcall_buffer",
        /// Pointer to the device heap (v5).
        HiddenHeapV1 = "hidden_heap_v1",
        /// Default device queue.
        HiddenDefaultQueue = "hidden_default_queue",
        /// Completion action for device enqueue.
        HiddenCompletionAction = "hidden_completion_action",
        /// Multi-grid synchronisation argument.
        HiddenMultigridSyncArg = "hidden_multigrid_sync_arg",
        /// Dynamic LDS size of the dispatch (v5).
        HiddenDynamicLdsSize = "hidden_dynamic_lds_size",
        /// Private aperture base (v5).
        HiddenPrivateBase = "hidden_private_base",
        /// Shared aperture base (v5).
        HiddenSharedBase = "hidden_shared_base",
        /// Pointer to the HSA queue (v5).
        HiddenQueuePtr = "hidden_queue_ptr",
    }
}

impl ArgValueKind {
    /// Whether the runtime, not the caller, fills this argument (`hidden_*` kinds).
    pub fn is_hidden(&self) -> bool {
        self.as_str().starts_with("hidden_")
    }
}

string_enum! {
    /// `.address_space` of a pointer argument.
    AddressSpace {
        /// Scratch memory.
        Private = "private",
        /// Global memory.
        Global = "global",
        /// Read-only global memory.
        Constant = "constant",
        /// LDS.
        Local = "local",
        /// The flat address space.
        Generic = "generic",
        /// GDS.
        Region = "region",
    }
}

string_enum! {
    /// `.access` / `.actual_access` of a pointer argument.
    Access {
        /// Only read.
        ReadOnly = "read_only",
        /// Only written.
        WriteOnly = "write_only",
        /// Read and written.
        ReadWrite = "read_write",
    }
}

/// Decodes the payload (`desc`) of an `NT_AMDGPU_METADATA` note.
pub fn parse_metadata(desc: &[u8]) -> Result<CodeObjectMetadata> {
    let mut reader = desc;
    let root = rmpv::decode::read_value_ref_with_max_depth(&mut reader, MAX_MSGPACK_DEPTH)
        .map_err(|e| bad(format!("msgpack: {e}")))?;
    let root = Map::of(&root, "root")?;

    let version = root
        .required("amdhsa.version")?
        .as_array()
        .filter(|items| items.len() == 2)
        .ok_or_else(|| bad("amdhsa.version is not an array of two integers".into()))?;
    let version = [
        to_u32(&version[0], "amdhsa.version[0]")?,
        to_u32(&version[1], "amdhsa.version[1]")?,
    ];
    let target = root.optional_str("amdhsa.target")?;
    let kernels = root
        .required("amdhsa.kernels")?
        .as_array()
        .ok_or_else(|| bad("amdhsa.kernels is not an array".into()))?
        .iter()
        .enumerate()
        .map(|(index, kernel)| parse_kernel(kernel, index))
        .collect::<Result<Vec<_>>>()?;
    let printf = match root.get("amdhsa.printf") {
        None => Vec::new(),
        Some(value) => value
            .as_array()
            .ok_or_else(|| bad("amdhsa.printf is not an array".into()))?
            .iter()
            .map(|entry| match entry {
                ValueRef::String(s) => s
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad("an amdhsa.printf entry is not valid UTF-8".into())),
                _ => Err(bad("an amdhsa.printf entry is not a string".into())),
            })
            .collect::<Result<Vec<_>>>()?,
    };
    Ok(CodeObjectMetadata {
        version,
        target,
        kernels,
        printf,
    })
}

fn parse_kernel(value: &ValueRef<'_>, index: usize) -> Result<KernelMetadata> {
    let map = Map::of(value, &format!("amdhsa.kernels[{index}]"))?;
    let name = map.required_str(".name")?;
    let map = Map {
        context: format!("kernel '{name}'"),
        ..map
    };
    let args = match map.get(".args") {
        None => Vec::new(),
        Some(args) => args
            .as_array()
            .ok_or_else(|| map.error(".args is not an array"))?
            .iter()
            .enumerate()
            .map(|(i, arg)| parse_arg(arg, &format!("kernel '{name}' argument {i}")))
            .collect::<Result<Vec<_>>>()?,
    };
    let reqd_workgroup_size = match map.get(".reqd_workgroup_size") {
        None => None,
        Some(value) => {
            let items = value
                .as_array()
                .filter(|items| items.len() == 3)
                .ok_or_else(|| map.error(".reqd_workgroup_size is not three integers"))?;
            let context = format!("kernel '{name}' .reqd_workgroup_size");
            Some([
                to_u32(&items[0], &context)?,
                to_u32(&items[1], &context)?,
                to_u32(&items[2], &context)?,
            ])
        }
    };
    Ok(KernelMetadata {
        symbol: map.required_str(".symbol")?,
        args,
        kernarg_segment_size: map.required_u32(".kernarg_segment_size")?,
        kernarg_segment_align: map.required_u32(".kernarg_segment_align")?,
        group_segment_fixed_size: map.required_u32(".group_segment_fixed_size")?,
        private_segment_fixed_size: map.required_u32(".private_segment_fixed_size")?,
        wavefront_size: map.required_u32(".wavefront_size")?,
        sgpr_count: map.required_u32(".sgpr_count")?,
        vgpr_count: map.required_u32(".vgpr_count")?,
        agpr_count: map.optional_u32(".agpr_count")?,
        sgpr_spill_count: map.optional_u32(".sgpr_spill_count")?,
        vgpr_spill_count: map.optional_u32(".vgpr_spill_count")?,
        max_flat_workgroup_size: map.required_u32(".max_flat_workgroup_size")?,
        uses_dynamic_stack: map.optional_bool(".uses_dynamic_stack")?,
        reqd_workgroup_size,
        name,
    })
}

fn parse_arg(value: &ValueRef<'_>, context: &str) -> Result<KernelArg> {
    let map = Map::of(value, context)?;
    Ok(KernelArg {
        offset: map.required_u32(".offset")?,
        size: map.required_u32(".size")?,
        value_kind: ArgValueKind::parse(&map.required_str(".value_kind")?),
        address_space: map
            .optional_str(".address_space")?
            .map(|s| AddressSpace::parse(&s)),
        name: map.optional_str(".name")?,
        type_name: map.optional_str(".type_name")?,
        actual_access: map
            .optional_str(".actual_access")?
            .map(|s| Access::parse(&s)),
        pointee_align: map.optional_u32(".pointee_align")?,
    })
}

fn bad(message: String) -> CodeObjectError {
    CodeObjectError::BadMetadata(message)
}

fn to_u32(value: &ValueRef<'_>, context: &str) -> Result<u32> {
    value
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| bad(format!("{context} is not an unsigned 32-bit integer")))
}

/// A msgpack map with string keys, plus the context used in error messages.
struct Map<'v, 'a> {
    entries: &'v [(ValueRef<'a>, ValueRef<'a>)],
    context: String,
}

impl<'v, 'a> Map<'v, 'a> {
    fn of(value: &'v ValueRef<'a>, context: &str) -> Result<Map<'v, 'a>> {
        match value {
            ValueRef::Map(entries) => Ok(Map {
                entries,
                context: context.to_owned(),
            }),
            _ => Err(bad(format!("{context} is not a map"))),
        }
    }

    fn error(&self, problem: &str) -> CodeObjectError {
        bad(format!("{}: {problem}", self.context))
    }

    fn get(&self, key: &str) -> Option<&'v ValueRef<'a>> {
        self.entries
            .iter()
            .find(|(k, _)| matches!(k, ValueRef::String(s) if s.as_str() == Some(key)))
            .map(|(_, v)| v)
    }

    fn required(&self, key: &str) -> Result<&'v ValueRef<'a>> {
        self.get(key)
            .ok_or_else(|| self.error(&format!("{key} is missing")))
    }

    fn required_str(&self, key: &str) -> Result<String> {
        self.optional_str(key)?
            .ok_or_else(|| self.error(&format!("{key} is missing")))
    }

    fn optional_str(&self, key: &str) -> Result<Option<String>> {
        self.get(key)
            .map(|value| match value {
                ValueRef::String(s) => s
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| self.error(&format!("{key} is not valid UTF-8"))),
                _ => Err(self.error(&format!("{key} is not a string"))),
            })
            .transpose()
    }

    fn required_u32(&self, key: &str) -> Result<u32> {
        self.optional_u32(key)?
            .ok_or_else(|| self.error(&format!("{key} is missing")))
    }

    fn optional_u32(&self, key: &str) -> Result<Option<u32>> {
        self.get(key)
            .map(|value| to_u32(value, &format!("{}: {key}", self.context)))
            .transpose()
    }

    fn optional_bool(&self, key: &str) -> Result<Option<bool>> {
        self.get(key)
            .map(|value| match value {
                ValueRef::Boolean(b) => Ok(*b),
                _ => Err(self.error(&format!("{key} is not a boolean"))),
            })
            .transpose()
    }
}
