//! Generic kernels: the substitution of an instance's arguments for the function's generic
//! parameters, so that each instance gets a concrete signature.

use crate::args::Instance;
use std::collections::HashMap;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, GenericArgument, GenericParam, Generics, Ident, Type};

/// What one instance puts in place of each generic parameter.
pub struct Substitution {
    types: HashMap<Ident, Type>,
    consts: HashMap<Ident, Expr>,
}

impl Substitution {
    /// Pairs `instance`'s arguments with the parameters of `generics`, in order.
    pub fn new(generics: &Generics, instance: &Instance) -> syn::Result<Self> {
        let params: Vec<_> = generics.params.iter().collect();
        let args: Vec<_> = instance.args.args.iter().collect();
        if params.len() != args.len() {
            return Err(syn::Error::new_spanned(
                &instance.args,
                format!(
                    "instance `{}` gives {} generic arguments, the kernel has {} generic parameters",
                    instance.name,
                    args.len(),
                    params.len()
                ),
            ));
        }
        let mut substitution = Substitution {
            types: HashMap::new(),
            consts: HashMap::new(),
        };
        for (param, arg) in params.into_iter().zip(args) {
            match (param, arg) {
                (GenericParam::Type(t), GenericArgument::Type(ty)) => {
                    substitution.types.insert(t.ident.clone(), ty.clone());
                }
                (GenericParam::Const(c), GenericArgument::Const(value)) => {
                    substitution.consts.insert(c.ident.clone(), value.clone());
                }
                (GenericParam::Const(c), GenericArgument::Type(Type::Path(path))) => {
                    let value = Expr::Path(syn::ExprPath {
                        attrs: Vec::new(),
                        qself: path.qself.clone(),
                        path: path.path.clone(),
                    });
                    substitution.consts.insert(c.ident.clone(), value);
                }
                (GenericParam::Lifetime(l), _) => {
                    return Err(syn::Error::new_spanned(
                        l,
                        "a kernel has no lifetime parameters: it takes raw pointers",
                    ));
                }
                (_, other) => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "expected a type for a type parameter, a value for a const parameter",
                    ));
                }
            }
        }
        Ok(substitution)
    }

    /// `ty` with every generic parameter replaced by this instance's argument.
    pub fn apply(&self, ty: &Type) -> Type {
        let mut ty = ty.clone();
        Replace(self).visit_type_mut(&mut ty);
        ty
    }
}

/// `Some(ident)` when `path` is a lone identifier without arguments.
fn lone_ident(path: &syn::Path) -> Option<&Ident> {
    (path.leading_colon.is_none() && path.segments.len() == 1)
        .then(|| &path.segments[0])
        .filter(|s| s.arguments.is_none())
        .map(|s| &s.ident)
}

/// The visitor that rewrites a type in place for a [`Substitution`].
struct Replace<'a>(&'a Substitution);

impl VisitMut for Replace<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(path) = ty
            && path.qself.is_none()
            && let Some(replacement) = lone_ident(&path.path).and_then(|i| self.0.types.get(i))
        {
            *ty = replacement.clone();
            return;
        }
        visit_mut::visit_type_mut(self, ty);
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Path(path) = expr
            && path.qself.is_none()
            && let Some(replacement) = lone_ident(&path.path).and_then(|i| self.0.consts.get(i))
        {
            *expr = syn::parse_quote!({ #replacement });
            return;
        }
        visit_mut::visit_expr_mut(self, expr);
    }
}
