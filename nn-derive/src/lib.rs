//! `#[derive(Module)]`: implements `oxtorch_nn::Module` for a struct by visiting its fields.
//!
//! Each named field is visited through the `oxtorch_nn::ModuleField` trait, so its *type* decides
//! what it is: a `Tensor` is a parameter, `Option<Tensor>` an optional parameter, `Buffer` a buffer
//! (`NonPersistentBuffer` one left out of the state dict),
//! any `Module` a child, `Vec<_>` a numbered list (`layers.0`, `layers.1`, ...), and plain values
//! (numbers, bools, strings) are skipped. `#[module(skip)]` skips a field explicitly, and
//! `#[module(name = "...")]` renames it in the state dict. A `training: bool` field is the module's
//! own flag: `train()`/`eval()` set it and `is_training()` reads it (torch's `self.training`).
//!
//! The generated code names the nn crate as `::oxtorch_nn` when the using crate depends on
//! `oxtorch-nn`, else as `::oxtorch::nn` (the facade); `#[module(crate = "path")]` on the struct
//! overrides that.
//!
//! `#[module(extra_repr)]` on the struct makes the module's `extra_repr` (what torch prints inside
//! its parentheses) call the struct's own `fn extra_repr_text(&self) -> String`.

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Fields, LitStr};

/// Derives `oxtorch_nn::Module` (see the crate docs).
#[proc_macro_derive(Module, attributes(module))]
pub fn derive_module(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let Data::Struct(data) = &input.data else {
        return syn::Error::new_spanned(&input, "#[derive(Module)] supports structs only")
            .to_compile_error()
            .into();
    };
    let (krate, has_extra_repr): (proc_macro2::TokenStream, bool) = match nn_path(&input) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error().into(),
    };
    let mut visits = Vec::new();
    let mut visits_mut = Vec::new();
    // A `training: bool` field is the module's own train/eval flag.
    let mut has_training_flag = false;
    let fields: Vec<_> = match &data.fields {
        Fields::Named(f) => f.named.iter().collect(),
        Fields::Unnamed(f) => f.unnamed.iter().collect(),
        Fields::Unit => Vec::new(),
    };
    for (i, field) in fields.iter().enumerate() {
        let mut skip = false;
        let mut rename: Option<String> = None;
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("module")) {
            let parsed = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("skip") {
                    skip = true;
                    Ok(())
                } else if meta.path.is_ident("name") {
                    rename = Some(meta.value()?.parse::<LitStr>()?.value());
                    Ok(())
                } else {
                    Err(meta.error("expected `skip` or `name = \"...\"`"))
                }
            });
            if let Err(e) = parsed {
                return e.to_compile_error().into();
            }
        }
        if field.ident.as_ref().is_some_and(|id| id == "training") && is_bool(&field.ty) {
            has_training_flag = true;
        }
        if skip {
            continue;
        }
        let (access, key) = match &field.ident {
            Some(id) => (quote!(#id), rename.unwrap_or_else(|| id.to_string())),
            None => {
                let idx = syn::Index::from(i);
                (quote!(#idx), rename.unwrap_or_else(|| i.to_string()))
            }
        };
        visits.push(quote! { #krate::ModuleField::visit_field(&self.#access, #key, f); });
        visits_mut.push(quote! { #krate::ModuleField::visit_field_mut(&mut self.#access, #key, f); });
    }
    let type_name = name.to_string();
    let training = has_training_flag.then(|| {
        quote! {
            fn set_training(&mut self, training: bool) {
                self.training = training;
            }
            fn training_flag(&self) -> Option<bool> {
                Some(self.training)
            }
        }
    });
    let extra_repr = has_extra_repr.then(|| {
        quote! {
            fn extra_repr(&self) -> ::std::string::String {
                Self::extra_repr_text(self)
            }
        }
    });
    quote! {
        impl #impl_generics #krate::Module for #name #ty_generics #where_clause {
            fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, #krate::Member<'m>)) {
                #(#visits)*
            }
            fn visit_mut(&mut self, f: &mut dyn FnMut(&str, #krate::MemberMut<'_>)) {
                #(#visits_mut)*
            }
            fn type_name(&self) -> &'static str {
                #type_name
            }
            #training
            #extra_repr
        }
    }
    .into()
}

/// The path of the nn crate as the using crate sees it (see the crate docs), and whether the
/// struct asks for `#[module(extra_repr)]`.
fn nn_path(input: &DeriveInput) -> syn::Result<(proc_macro2::TokenStream, bool)> {
    let mut found = None;
    let mut extra_repr = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("module")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                found = Some(meta.value()?.parse::<LitStr>()?.parse::<syn::Path>()?);
                Ok(())
            } else if meta.path.is_ident("extra_repr") {
                extra_repr = true;
                Ok(())
            } else {
                Err(meta.error("expected `crate = \"path\"` or `extra_repr`"))
            }
        })?;
    }
    if let Some(p) = found {
        return Ok((quote!(#p), extra_repr));
    }
    let direct = std::env::var("CARGO_PKG_NAME").is_ok_and(|n| n == "oxtorch-nn")
        || std::env::var("CARGO_MANIFEST_DIR")
            .ok()
            .and_then(|d| std::fs::read_to_string(std::path::Path::new(&d).join("Cargo.toml")).ok())
            .is_some_and(|toml| toml.lines().any(|l| l.trim_start().starts_with("oxtorch-nn")));
    Ok((if direct { quote!(::oxtorch_nn) } else { quote!(::oxtorch::nn) }, extra_repr))
}

/// Whether `ty` is `bool`, also when a `macro_rules!` passed it on as a `$t:ty` fragment (an
/// invisible group around the path).
fn is_bool(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => p.path.is_ident("bool"),
        syn::Type::Group(g) => is_bool(&g.elem),
        syn::Type::Paren(p) => is_bool(&p.elem),
        _ => false,
    }
}
