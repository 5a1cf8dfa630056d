//! The fields of a module: buffer wrappers and [`ModuleField`], how `#[derive(Module)]` sees each field.

use oxtorch_tensor::Tensor;

use super::{Layer, Member, MemberMut, Module};

/// A tensor registered as a buffer (saved and moved with the module, never trained), such as
/// batch norm's running statistics.
#[derive(Clone)]
pub struct Buffer(pub Tensor);

impl std::ops::Deref for Buffer {
    type Target = Tensor;
    fn deref(&self) -> &Tensor {
        &self.0
    }
}

/// A buffer that moves with the module and is listed by `named_buffers`, but is neither saved in
/// nor loaded from the state dict (torch's `register_buffer(name, t, persistent=False)`): a cache
/// that the module recomputes, such as rotary frequencies or position ids. A checkpoint entry under
/// its name is an unexpected key, as in torch.
#[derive(Clone)]
pub struct NonPersistentBuffer(pub Tensor);

impl std::ops::Deref for NonPersistentBuffer {
    type Target = Tensor;
    fn deref(&self) -> &Tensor {
        &self.0
    }
}

/// How a struct field takes part in a module (used by `#[derive(Module)]`): the field's type
/// decides whether it is a parameter, buffer, child, list of those, or a plain value.
pub trait ModuleField {
    /// Visits this field under `name`.
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>));
    /// Visits this field under `name`, mutably.
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>));
}

impl ModuleField for Tensor {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        f(name, Member::Param(self));
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f(name, MemberMut::Param(self));
    }
}

impl ModuleField for Buffer {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        f(name, Member::Buffer(&self.0));
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f(name, MemberMut::Buffer(&mut self.0));
    }
}

impl ModuleField for NonPersistentBuffer {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        f(name, Member::NonPersistentBuffer(&self.0));
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f(name, MemberMut::NonPersistentBuffer(&mut self.0));
    }
}

impl<M: Module> ModuleField for M {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        f(name, Member::Child(self));
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f(name, MemberMut::Child(self));
    }
}

impl ModuleField for Box<dyn Layer> {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        f(name, Member::Child(&**self as &dyn Module));
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f(name, MemberMut::Child(&mut **self as &mut dyn Module));
    }
}

impl ModuleField for Box<dyn Module> {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        f(name, Member::Child(&**self));
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f(name, MemberMut::Child(&mut **self));
    }
}

impl<T: ModuleField> ModuleField for Option<T> {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        if let Some(t) = self {
            t.visit_field(name, f);
        }
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        if let Some(t) = self {
            t.visit_field_mut(name, f);
        }
    }
}

impl<T: ModuleField> ModuleField for Vec<T> {
    fn visit_field<'m>(&'m self, name: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
        for (i, t) in self.iter().enumerate() {
            t.visit_field(&format!("{name}.{i}"), f);
        }
    }
    fn visit_field_mut(&mut self, name: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        for (i, t) in self.iter_mut().enumerate() {
            t.visit_field_mut(&format!("{name}.{i}"), f);
        }
    }
}

/// Plain values (hyper-parameters) are not part of the module tree.
macro_rules! plain_fields {
    ($($t:ty),*) => {$(
        impl ModuleField for $t {
            fn visit_field<'m>(&'m self, _: &str, _: &mut dyn FnMut(&str, Member<'m>)) {}
            fn visit_field_mut(&mut self, _: &str, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
        }
    )*};
}
plain_fields!(
    bool,
    u8,
    u16,
    u32,
    u64,
    usize,
    i8,
    i16,
    i32,
    i64,
    isize,
    f32,
    f64,
    String,
    &'static str,
    oxtorch_tensor::DType,
    oxtorch_tensor::Device
);
