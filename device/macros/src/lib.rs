//! The `#[kernel]` attribute of Iron's device crates.
//!
//! A kernel is an ordinary Rust function marked `#[kernel(max_threads = N)]`. The attribute:
//! - on the GPU (`target_arch = "amdgpu"`), exports the function as an AMDGPU kernel
//!   (`extern "gpu-kernel"`, unmangled) and records its launch bounds and contract in a symbol
//!   named `iron.launch_bounds.<kernel>` that `cargo xtask build` reads and removes after LTO,
//!   when it applies them (`amdgpu-flat-work-group-size`, `amdgpu-waves-per-eu`,
//!   `reqd_work_group_size`);
//! - on the host, turns the function into a typed launch declaration
//!   (`iron_intrinsics::launch::KernelDecl<fn(..)>`) carrying its name, its parameter types, its
//!   launch bounds and its launch contract, so that host code launches it by value, never by a
//!   name string, and a launch that breaks the contract is refused;
//! - on the host, also keeps the body as a function nothing calls, so that `cargo check`, clippy
//!   and the IDE type-check it against the device vocabulary (which exists on the host for that:
//!   its hardware operations panic there). A generic kernel's function stays a (hidden) generic
//!   function, and each instance's arguments are checked against its bounds.
//!
//! Arguments:
//! - `max_threads = N`: the largest workgroup the kernel supports, 1..=1024. It sets the
//!   register budget the compiler works with, and host launches larger than it are refused.
//!   Required unless `block` is given (then it defaults to the block's size).
//! - `waves_per_eu = (MIN, MAX)` or `waves_per_eu = MIN` (optional): occupancy hints.
//! - `allow_scratch` (optional): the kernel may use scratch memory (spills, stack); without it any
//!   scratch use fails the build.
//! - The launch contract (all optional), checked by every typed launch:
//!   - `whole_waves`: the workgroup is a whole number of waves (wave-wide operations need every
//!     lane);
//!   - `block = N`, `block = (X, Y)` or `block = (X, Y, Z)`: the one workgroup shape the kernel
//!     runs; the code object carries it as `.reqd_workgroup_size`;
//!   - `block_multiple = N`: the workgroup's size is a multiple of `N`;
//!   - `dynamic_lds = |threads, wave| bytes`: the least dynamic LDS the kernel needs, as a
//!     function of the workgroup's size and the wave size (both `u32`).
//! - `instances = [name<Args..>, ..]` on a generic function: exports one kernel per entry, the
//!   function with those generic arguments, each with its own typed declaration. A generic
//!   kernel needs `instances`; the generic function itself stays callable on the device.

mod args;
mod instances;

use args::{Instance, KernelArgs};
use instances::Substitution;
use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::{FnArg, Ident, ItemFn, Pat, Type};

/// Marks a function as a GPU kernel with declared launch bounds; see the crate documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(attr as KernelArgs);
    let func = syn::parse_macro_input!(item as ItemFn);
    expand(&args, func)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn expand(args: &KernelArgs, func: ItemFn) -> syn::Result<TokenStream2> {
    let sig = &func.sig;
    if sig.asyncness.is_some() || sig.variadic.is_some() {
        return Err(syn::Error::new_spanned(
            sig,
            "a kernel cannot be async or variadic",
        ));
    }
    if !matches!(sig.output, syn::ReturnType::Default) {
        return Err(syn::Error::new_spanned(
            &sig.output,
            "a kernel returns nothing: write results through pointers",
        ));
    }
    let mut param_types = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Typed(pt) => param_types.push((*pt.ty).clone()),
            FnArg::Receiver(r) => {
                return Err(syn::Error::new_spanned(r, "a kernel cannot take self"));
            }
        }
    }
    let generic = !sig.generics.params.is_empty();
    match (generic, args.instances.is_empty()) {
        (false, true) => Ok(plain_kernel(args, &func, &param_types)),
        (true, false) => generic_kernel(args, &func, &param_types),
        (true, true) => Err(syn::Error::new_spanned(
            &sig.generics,
            "a generic kernel names the instances it exports: \
             #[kernel(max_threads = N, instances = [name_f32<f32>, ..])]",
        )),
        (false, false) => Err(syn::Error::new_spanned(
            &sig.ident,
            "`instances` is for generic kernels: this function has no generic parameters",
        )),
    }
}

/// The clippy lints a kernel's host body is exempt from: its parameters are the launch's ABI (a
/// kernel takes as many as its work needs), and its pointer arguments' contract is the launch's,
/// which is `unsafe` on the host.
fn host_body_lints() -> TokenStream2 {
    quote! { clippy::too_many_arguments, clippy::not_unsafe_ptr_arg_deref }
}

/// A kernel without generic parameters: the function itself is exported.
fn plain_kernel(args: &KernelArgs, func: &ItemFn, param_types: &[Type]) -> TokenStream2 {
    let sig = &func.sig;
    let name = &sig.ident;
    let vis = &func.vis;
    let attrs = &func.attrs;
    let unsafety = &sig.unsafety;
    let inputs = &sig.inputs;
    let body = &func.block;
    let record = bounds_record(args, name);
    let decl = declaration(args, func, name, param_types, None);
    let host_body_lints = host_body_lints();
    quote! {
        #[cfg(target_arch = "amdgpu")]
        #(#attrs)*
        #[unsafe(no_mangle)]
        #vis #unsafety extern "gpu-kernel" fn #name(#inputs) #body

        #[cfg(not(target_arch = "amdgpu"))]
        const _: () = {
            #(#attrs)*
            #[allow(dead_code, #host_body_lints)]
            #unsafety fn #name(#inputs) #body
        };

        #record
        #decl
    }
}

/// A generic kernel: the generic function on the device, and per instance an exported kernel
/// that calls it and a declaration on the host.
fn generic_kernel(
    args: &KernelArgs,
    func: &ItemFn,
    param_types: &[Type],
) -> syn::Result<TokenStream2> {
    let sig = &func.sig;
    let name = &sig.ident;
    let vis = &func.vis;
    let unsafety = &sig.unsafety;
    let host_body_lints = host_body_lints();
    let mut out = quote! {
        #[cfg(target_arch = "amdgpu")]
        #[inline(always)]
        #func

        #[cfg(not(target_arch = "amdgpu"))]
        #[doc(hidden)]
        #[allow(dead_code, #host_body_lints)]
        #func
    };
    for instance in &args.instances {
        let substitution = Substitution::new(&sig.generics, instance)?;
        let types: Vec<Type> = param_types.iter().map(|t| substitution.apply(t)).collect();
        let names: Vec<Ident> = sig
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| match input {
                FnArg::Typed(pt) => match &*pt.pat {
                    Pat::Ident(p) => p.ident.clone(),
                    _ => format_ident!("__iron_arg{i}"),
                },
                FnArg::Receiver(_) => format_ident!("__iron_self"),
            })
            .collect();
        let Instance {
            name: inst,
            args: generic_args,
        } = instance;
        let call = quote! { #name::#generic_args(#(#names),*) };
        let call = if unsafety.is_some() {
            quote! {
                // SAFETY: the instance's caller gives the guarantees of the generic kernel.
                unsafe { #call }
            }
        } else {
            call
        };
        let record = bounds_record(args, inst);
        let decl = declaration(args, func, inst, &types, Some(instance));
        out.extend(quote! {
            #[cfg(not(target_arch = "amdgpu"))]
            const _: () = {
                #[allow(dead_code)]
                fn instance_arguments_satisfy_the_bounds() {
                    let _: #unsafety fn(#(#types),*) = #name::#generic_args;
                }
            };

            #[cfg(target_arch = "amdgpu")]
            #[doc(hidden)]
            #[unsafe(no_mangle)]
            #vis #unsafety extern "gpu-kernel" fn #inst(#(#names: #types),*) { #call }

            #record
            #decl
        });
    }
    Ok(out)
}

/// The device-side record of a kernel's bounds and contract, read and removed by the build:
/// `[max_threads, min_waves_per_eu, max_waves_per_eu, flags, block_multiple, block x, y, z]`,
/// flags bit 0 `allow_scratch`, bit 1 `whole_waves`; a block of 0s means no required shape.
fn bounds_record(args: &KernelArgs, kernel: &Ident) -> TokenStream2 {
    let name_str = kernel.to_string();
    let symbol = format!("iron.launch_bounds.{name_str}");
    let static_name = format_ident!("__IRON_LAUNCH_BOUNDS_{}", name_str.to_uppercase());
    let KernelArgs {
        max_threads,
        min_waves_per_eu,
        max_waves_per_eu,
        block_multiple,
        ..
    } = *args;
    let flags = u32::from(args.allow_scratch) | u32::from(args.whole_waves) << 1;
    let [x, y, z] = args.block.unwrap_or([0; 3]);
    quote! {
        #[cfg(target_arch = "amdgpu")]
        #[doc(hidden)]
        #[unsafe(export_name = #symbol)]
        pub static #static_name: [u32; 8] = [
            #max_threads, #min_waves_per_eu, #max_waves_per_eu, #flags,
            #block_multiple, #x, #y, #z,
        ];
    }
}

/// The host-side declaration of kernel `kernel` with parameter types `types`.
fn declaration(
    args: &KernelArgs,
    func: &ItemFn,
    kernel: &Ident,
    types: &[Type],
    instance: Option<&Instance>,
) -> TokenStream2 {
    let vis = &func.vis;
    let name_str = kernel.to_string();
    let doc_attrs = func.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let instance_doc = instance.map(|i| {
        let generic_args = &i.args;
        let text = format!(
            " The instance `{}::{}` of this generic kernel.",
            func.sig.ident,
            quote!(#generic_args).to_string().replace(' ', "")
        );
        quote! {
            #[doc = ""]
            #[doc = #text]
        }
    });
    let KernelArgs {
        max_threads,
        min_waves_per_eu,
        max_waves_per_eu,
        allow_scratch,
        whole_waves,
        block_multiple,
        ..
    } = *args;
    let block = match args.block {
        Some([x, y, z]) => quote! { ::core::option::Option::Some([#x, #y, #z]) },
        None => quote! { ::core::option::Option::None },
    };
    let (lds_fn, lds) = match &args.dynamic_lds {
        Some(closure) => {
            let fn_name = format_ident!("__iron_dynamic_lds_{}", name_str);
            (
                quote! {
                    #[cfg(not(target_arch = "amdgpu"))]
                    #[doc(hidden)]
                    fn #fn_name(threads: u32, wave: u32) -> u32 {
                        let bytes = #closure;
                        bytes(threads, wave)
                    }
                },
                quote! { ::core::option::Option::Some(#fn_name as fn(u32, u32) -> u32) },
            )
        }
        None => (quote! {}, quote! { ::core::option::Option::None }),
    };
    quote! {
        #lds_fn

        #[cfg(not(target_arch = "amdgpu"))]
        #(#doc_attrs)*
        #instance_doc
        #[allow(non_upper_case_globals)]
        #vis const #kernel: ::iron_intrinsics::launch::KernelDecl<fn(#(#types),*)> =
            ::iron_intrinsics::launch::KernelDecl::new(
                #name_str,
                ::iron_intrinsics::launch::LaunchBounds {
                    max_threads: #max_threads,
                    min_waves_per_eu: #min_waves_per_eu,
                    max_waves_per_eu: #max_waves_per_eu,
                    allow_scratch: #allow_scratch,
                },
            )
            .with_contract(::iron_intrinsics::launch::LaunchContract {
                whole_waves: #whole_waves,
                block_multiple: #block_multiple,
                block: #block,
                dynamic_lds: #lds,
            });
    }
}
