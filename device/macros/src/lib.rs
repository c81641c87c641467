//! The `#[kernel]` attribute of Iron's device crates.
//!
//! A kernel is an ordinary Rust function marked `#[kernel(max_threads = N)]`. The attribute:
//! - on the GPU (`target_arch = "amdgpu"`), exports the function as an AMDGPU kernel
//!   (`extern "gpu-kernel"`, unmangled) and records its launch bounds in a symbol named
//!   `iron.launch_bounds.<kernel>` that `cargo xtask build` reads and removes after LTO, when it
//!   applies the bounds (`amdgpu-flat-work-group-size`, `amdgpu-waves-per-eu`);
//! - on the host, turns the function into a typed launch declaration
//!   (`iron_intrinsics::launch::KernelDecl<fn(..)>`) carrying its name, its parameter types and its
//!   launch bounds, so that host code launches it by value, never by a name string.
//!
//! Arguments:
//! - `max_threads = N` (required): the largest workgroup the kernel supports, 1..=1024. It sets the
//!   register budget the compiler works with, and host launches larger than it are refused.
//! - `waves_per_eu = (MIN, MAX)` or `waves_per_eu = MIN` (optional): occupancy hints.
//! - `allow_scratch` (optional): the kernel may use scratch memory (spills, stack); without it any
//!   scratch use fails the build.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, ExprTuple, FnArg, ItemFn, Lit, Meta, Token};

/// Launch bounds parsed from the attribute's arguments.
struct Bounds {
    max_threads: u32,
    min_waves_per_eu: u32,
    max_waves_per_eu: u32,
    allow_scratch: bool,
}

impl Parse for Bounds {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let metas = Punctuated::<Meta, Token![,]>::parse_terminated(input)?;
        let mut bounds = Bounds {
            max_threads: 0,
            min_waves_per_eu: 0,
            max_waves_per_eu: 0,
            allow_scratch: false,
        };
        for meta in metas {
            match &meta {
                Meta::Path(p) if p.is_ident("allow_scratch") => bounds.allow_scratch = true,
                Meta::NameValue(nv) if nv.path.is_ident("max_threads") => {
                    let n = int_of(&nv.value)?;
                    if !(1..=1024).contains(&n) {
                        return Err(syn::Error::new_spanned(
                            &nv.value,
                            "max_threads must be between 1 and 1024",
                        ));
                    }
                    bounds.max_threads = n;
                }
                Meta::NameValue(nv) if nv.path.is_ident("waves_per_eu") => {
                    let (min, max) = match &nv.value {
                        Expr::Tuple(ExprTuple { elems, .. }) if elems.len() == 2 => {
                            (int_of(&elems[0])?, int_of(&elems[1])?)
                        }
                        other => (int_of(other)?, 0),
                    };
                    if min == 0 || (max != 0 && max < min) {
                        return Err(syn::Error::new_spanned(
                            &nv.value,
                            "waves_per_eu must be MIN or (MIN, MAX) with 1 <= MIN <= MAX",
                        ));
                    }
                    bounds.min_waves_per_eu = min;
                    bounds.max_waves_per_eu = max;
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "expected `max_threads = N`, `waves_per_eu = (MIN, MAX)` or `allow_scratch`",
                    ));
                }
            }
        }
        if bounds.max_threads == 0 {
            return Err(syn::Error::new(
                Span::call_site(),
                "a kernel must declare its largest workgroup: #[kernel(max_threads = N)]",
            ));
        }
        Ok(bounds)
    }
}

fn int_of(expr: &Expr) -> syn::Result<u32> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse(),
        other => Err(syn::Error::new_spanned(
            other,
            "expected an integer literal",
        )),
    }
}

/// Marks a function as a GPU kernel with declared launch bounds; see the crate documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let bounds = syn::parse_macro_input!(attr as Bounds);
    let func = syn::parse_macro_input!(item as ItemFn);
    expand(&bounds, func)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn expand(bounds: &Bounds, func: ItemFn) -> syn::Result<TokenStream2> {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() || sig.asyncness.is_some() || sig.variadic.is_some() {
        return Err(syn::Error::new_spanned(
            sig,
            "a kernel cannot be generic, async or variadic",
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
    let name = &sig.ident;
    let name_str = name.to_string();
    let vis = &func.vis;
    let attrs = &func.attrs;
    let doc_attrs = attrs.iter().filter(|a| a.path().is_ident("doc"));
    let unsafety = &sig.unsafety;
    let inputs = &sig.inputs;
    let body = &func.block;
    let bounds_symbol = format!("iron.launch_bounds.{name_str}");
    let bounds_static = format_ident!("__IRON_LAUNCH_BOUNDS_{}", name_str.to_uppercase());
    let Bounds {
        max_threads,
        min_waves_per_eu,
        max_waves_per_eu,
        allow_scratch,
    } = *bounds;
    let flags = u32::from(allow_scratch);
    Ok(quote! {
        #[cfg(target_arch = "amdgpu")]
        #(#attrs)*
        #[unsafe(no_mangle)]
        #vis #unsafety extern "gpu-kernel" fn #name(#inputs) #body

        #[cfg(target_arch = "amdgpu")]
        #[doc(hidden)]
        #[unsafe(export_name = #bounds_symbol)]
        pub static #bounds_static: [u32; 4] =
            [#max_threads, #min_waves_per_eu, #max_waves_per_eu, #flags];

        #[cfg(not(target_arch = "amdgpu"))]
        #(#doc_attrs)*
        #[allow(non_upper_case_globals)]
        #vis const #name: ::iron_intrinsics::launch::KernelDecl<fn(#(#param_types),*)> =
            ::iron_intrinsics::launch::KernelDecl::new(
                #name_str,
                ::iron_intrinsics::launch::LaunchBounds {
                    max_threads: #max_threads,
                    min_waves_per_eu: #min_waves_per_eu,
                    max_waves_per_eu: #max_waves_per_eu,
                    allow_scratch: #allow_scratch,
                },
            );
    })
}
