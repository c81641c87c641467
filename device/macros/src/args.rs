//! The arguments of `#[kernel(...)]`: launch bounds, the launch contract and generic instances.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{AngleBracketedGenericArguments, Expr, ExprLit, ExprTuple, Ident, Lit, Token, bracketed};

/// Everything `#[kernel(...)]` declares.
pub struct KernelArgs {
    /// Largest workgroup in work-items (from `max_threads`, or the product of `block`).
    pub max_threads: u32,
    /// `waves_per_eu` minimum (0: no hint).
    pub min_waves_per_eu: u32,
    /// `waves_per_eu` maximum (0: no hint).
    pub max_waves_per_eu: u32,
    /// `allow_scratch`.
    pub allow_scratch: bool,
    /// `whole_waves`: the block must be a multiple of the wave.
    pub whole_waves: bool,
    /// `block_multiple = N` (0: none).
    pub block_multiple: u32,
    /// `block = N | (X, Y) | (X, Y, Z)`: the one workgroup shape the kernel runs.
    pub block: Option<[u32; 3]>,
    /// `dynamic_lds = |threads, wave| bytes`: the dynamic LDS the kernel needs.
    pub dynamic_lds: Option<Expr>,
    /// `instances = [name<args>, ...]`: the kernels a generic function is exported as.
    pub instances: Vec<Instance>,
}

/// One exported instance of a generic kernel: `name<T, 4>`.
pub struct Instance {
    /// The exported kernel's name.
    pub name: Ident,
    /// The generic arguments, in the order of the function's parameters.
    pub args: AngleBracketedGenericArguments,
}

impl Parse for Instance {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        Ok(Instance {
            name: input.parse()?,
            args: input.parse()?,
        })
    }
}

const EXPECTED: &str = "expected `max_threads = N`, `waves_per_eu = (MIN, MAX)`, `allow_scratch`, \
     `whole_waves`, `block = (X, Y, Z)`, `block_multiple = N`, `dynamic_lds = |threads, wave| bytes` \
     or `instances = [name<T, ..>, ..]`";

impl Parse for KernelArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut args = KernelArgs {
            max_threads: 0,
            min_waves_per_eu: 0,
            max_waves_per_eu: 0,
            allow_scratch: false,
            whole_waves: false,
            block_multiple: 0,
            block: None,
            dynamic_lds: None,
            instances: Vec::new(),
        };
        let mut max_threads = None;
        while !input.is_empty() {
            let key: Ident = input
                .parse()
                .map_err(|e| syn::Error::new(e.span(), EXPECTED))?;
            match key.to_string().as_str() {
                "allow_scratch" => args.allow_scratch = true,
                "whole_waves" => args.whole_waves = true,
                "max_threads" => {
                    let value = value_of(input)?;
                    let n = int_of(&value)?;
                    if !(1..=1024).contains(&n) {
                        return Err(syn::Error::new_spanned(
                            &value,
                            "max_threads must be between 1 and 1024",
                        ));
                    }
                    max_threads = Some((n, value));
                }
                "waves_per_eu" => {
                    let value = value_of(input)?;
                    let (min, max) = match &value {
                        Expr::Tuple(ExprTuple { elems, .. }) if elems.len() == 2 => {
                            (int_of(&elems[0])?, int_of(&elems[1])?)
                        }
                        other => (int_of(other)?, 0),
                    };
                    if min == 0 || (max != 0 && max < min) {
                        return Err(syn::Error::new_spanned(
                            &value,
                            "waves_per_eu must be MIN or (MIN, MAX) with 1 <= MIN <= MAX",
                        ));
                    }
                    args.min_waves_per_eu = min;
                    args.max_waves_per_eu = max;
                }
                "block" => args.block = Some(block_of(&value_of(input)?)?),
                "block_multiple" => {
                    let value = value_of(input)?;
                    let n = int_of(&value)?;
                    if !(1..=1024).contains(&n) {
                        return Err(syn::Error::new_spanned(
                            &value,
                            "block_multiple must be between 1 and 1024",
                        ));
                    }
                    args.block_multiple = n;
                }
                "dynamic_lds" => {
                    let value = value_of(input)?;
                    match &value {
                        Expr::Closure(c) if c.inputs.len() == 2 => {}
                        other => {
                            return Err(syn::Error::new_spanned(
                                other,
                                "dynamic_lds is a function of the block: \
                                 `dynamic_lds = |threads, wave| bytes` (both u32)",
                            ));
                        }
                    }
                    args.dynamic_lds = Some(value);
                }
                "instances" => {
                    input.parse::<Token![=]>()?;
                    let content;
                    bracketed!(content in input);
                    let list = Punctuated::<Instance, Token![,]>::parse_terminated(&content)?;
                    if list.is_empty() {
                        return Err(syn::Error::new_spanned(
                            &key,
                            "instances lists at least one `name<T, ..>`",
                        ));
                    }
                    args.instances = list.into_iter().collect();
                }
                _ => return Err(syn::Error::new_spanned(&key, EXPECTED)),
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        let block_threads = args.block.map(|[x, y, z]| x * y * z);
        args.max_threads = match (max_threads, block_threads) {
            (Some((n, value)), Some(threads)) if n < threads => {
                return Err(syn::Error::new_spanned(
                    value,
                    format!("max_threads = {n} is below the declared block of {threads}"),
                ));
            }
            (Some((n, _)), _) => n,
            (None, Some(threads)) => threads,
            (None, None) => {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "a kernel must declare its largest workgroup: #[kernel(max_threads = N)] \
                     (or its one block shape: #[kernel(block = (X, Y, Z))])",
                ));
            }
        };
        if let (Some(threads), multiple @ 1..) = (block_threads, args.block_multiple)
            && threads % multiple != 0
        {
            return Err(syn::Error::new(
                Span::call_site(),
                format!("the declared block of {threads} is not a multiple of {multiple}"),
            ));
        }
        Ok(args)
    }
}

fn value_of(input: ParseStream<'_>) -> syn::Result<Expr> {
    input.parse::<Token![=]>()?;
    input.parse()
}

fn block_of(value: &Expr) -> syn::Result<[u32; 3]> {
    let dims = match value {
        Expr::Tuple(ExprTuple { elems, .. }) if (1..=3).contains(&elems.len()) => {
            elems.iter().map(int_of).collect::<syn::Result<Vec<_>>>()?
        }
        Expr::Paren(p) => vec![int_of(&p.expr)?],
        other => vec![int_of(other)?],
    };
    let mut block = [1; 3];
    block[..dims.len()].copy_from_slice(&dims);
    let threads = block.iter().map(|&d| u64::from(d)).product::<u64>();
    if block.contains(&0) || threads > 1024 {
        return Err(syn::Error::new_spanned(
            value,
            "block must have 1 to 1024 work-items, none of its dimensions 0",
        ));
    }
    Ok(block)
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
