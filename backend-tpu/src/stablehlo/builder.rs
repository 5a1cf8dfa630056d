//! Building one `func.func @main` in generic StableHLO syntax.

use std::collections::HashMap;
use std::fmt::Write;

use super::host_call::HostOperand;
use crate::pjrt::{ElementType, TensorType};

/// An SSA value of the function being built, with its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    name: String,
    ty: TensorType,
}

impl Value {
    /// The value's type.
    pub fn ty(&self) -> &TensorType {
        &self.ty
    }

    /// The SSA name, e.g. `%0`.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Accumulates the body of `func.func @main`.
#[derive(Debug)]
pub struct FunctionBuilder {
    args: Vec<Value>,
    body: String,
    next: usize,
    /// Each `transpose` emitted so far: its result's name, its operand and permutation (so that a
    /// consumer such as `dot_general` can read the operand in place instead).
    transposes: HashMap<String, (Value, Vec<i64>)>,
    /// Each value emitted as the same elements in the same row-major order as an earlier one (a
    /// `reshape`, or a `broadcast_in_dim` that only inserts unit dims): its name and the earliest
    /// such value.
    reinterpretations: HashMap<String, Value>,
    /// Each `broadcast_in_dim` emitted so far: its result's name, its operand and dims map (so that
    /// a scatter can see that its index is one vector repeated along the other dims).
    broadcasts: HashMap<String, (Value, Vec<i64>)>,
    /// Each value emitted as a dense copy of a strided view: its name, and the storage and view it
    /// copies (so that a host kernel reading the copy can read the view instead, and XLA drops
    /// the copy when nothing else reads it).
    copies: HashMap<String, HostOperand>,
    /// Whether products and the cross-entropy may call oxtorch's host kernels (a program for the
    /// CPU plugin).
    host_kernels: bool,
}

/// The MLIR literal of `value` as an element of `ty`: the exact bit pattern in hex for floats
/// (so infinities, NaN and every rounding are spelled exactly), decimal for integers, and
/// `true`/`false` for bools.
pub fn literal(ty: ElementType, value: f64) -> String {
    match ty {
        ElementType::F32 => format!("0x{:08X}", (value as f32).to_bits()),
        ElementType::F64 => format!("0x{:016X}", value.to_bits()),
        ElementType::F16 => format!("0x{:04X}", half::f16::from_f64(value).to_bits()),
        ElementType::BF16 => format!("0x{:04X}", half::bf16::from_f32(value as f32).to_bits()),
        ElementType::Pred => (if value != 0.0 { "true" } else { "false" }).to_string(),
        _ => format!("{}", value as i64),
    }
}

impl FunctionBuilder {
    /// The operand and permutation of `v` when `v` is the result of a `transpose` of this
    /// function.
    pub fn transpose_of(&self, v: &Value) -> Option<(&Value, &[i64])> {
        self.transposes.get(&v.name).map(|(x, perm)| (x, perm.as_slice()))
    }

    /// Records that `result` is `x` transposed by `perm` (see [`FunctionBuilder::transpose_of`]).
    pub(super) fn record_transpose(&mut self, result: &Value, x: &Value, perm: &[i64]) {
        self.transposes.insert(result.name.clone(), (x.clone(), perm.to_vec()));
    }

    /// The earliest value holding `v`'s elements in the same row-major order, when `v` is a
    /// reshape of it (through any chain of reshapes and unit-dim broadcasts).
    pub fn row_major_source(&self, v: &Value) -> Option<&Value> {
        self.reinterpretations.get(&v.name)
    }

    /// Records that `result` holds `x`'s elements in the same row-major order.
    pub(super) fn record_reinterpretation(&mut self, result: &Value, x: &Value) {
        let source = self.row_major_source(x).unwrap_or(x).clone();
        self.reinterpretations.insert(result.name.clone(), source);
    }

    /// The operand and dims map of `v` when `v` is the result of a `broadcast_in_dim` of this
    /// function.
    pub fn broadcast_of(&self, v: &Value) -> Option<(&Value, &[i64])> {
        self.broadcasts.get(&v.name).map(|(x, map)| (x, map.as_slice()))
    }

    /// Records that `result` is `x` broadcast with dims map `map` (see
    /// [`FunctionBuilder::broadcast_of`]).
    pub(super) fn record_broadcast(&mut self, result: &Value, x: &Value, map: &[i64]) {
        self.broadcasts.insert(result.name.clone(), (x.clone(), map.to_vec()));
    }

    /// The storage and view that `v` is a dense copy of, when it was recorded as one.
    pub fn copy_source(&self, v: &Value) -> Option<&HostOperand> {
        self.copies.get(&v.name)
    }

    /// Records that `result` holds the elements of `source`'s view, row-major (see
    /// [`FunctionBuilder::copy_source`]).
    pub fn record_copy(&mut self, result: &Value, source: HostOperand) {
        self.copies.insert(result.name.clone(), source);
    }

    /// Lets products and the cross-entropy call oxtorch's host kernels (`custom_call`s registered
    /// with the CPU plugin) instead of XLA's own ops.
    pub fn set_host_kernels(&mut self, on: bool) {
        self.host_kernels = on;
    }

    /// Whether products and the cross-entropy may call oxtorch's host kernels.
    pub fn host_kernels(&self) -> bool {
        self.host_kernels
    }

    /// A function taking arguments of types `args`; returns the builder and the argument values.
    pub fn new(args: &[TensorType]) -> (FunctionBuilder, Vec<Value>) {
        let args: Vec<Value> = args
            .iter()
            .enumerate()
            .map(|(i, ty)| Value { name: format!("%arg{i}"), ty: ty.clone() })
            .collect();
        let values = args.clone();
        (
            FunctionBuilder {
                args,
                body: String::new(),
                next: 0,
                transposes: HashMap::new(),
                reinterpretations: HashMap::new(),
                broadcasts: HashMap::new(),
                copies: HashMap::new(),
                host_kernels: false,
            },
            values,
        )
    }

    /// Emits `"<name>"(operands) {attrs} : (operand types) -> result`; `attrs` is the inside of
    /// the attribute dictionary (empty for none).
    pub fn op(&mut self, name: &str, operands: &[&Value], attrs: &str, result: TensorType) -> Value {
        let value = Value { name: format!("%{}", self.next), ty: result };
        self.next += 1;
        let names: Vec<&str> = operands.iter().map(|v| v.name.as_str()).collect();
        let types: Vec<String> = operands.iter().map(|v| v.ty.to_string()).collect();
        let attrs = if attrs.is_empty() { String::new() } else { format!(" {{{attrs}}}") };
        // Writing to a String cannot fail.
        let _ = writeln!(
            self.body,
            "    {} = \"{name}\"({}){attrs} : ({}) -> {}",
            value.name,
            names.join(", "),
            types.join(", "),
            value.ty
        );
        value
    }

    /// Emits an op with regions and any number of results:
    /// `"<name>"(operands) ({region}, ...) {attrs} : (operand types) -> (result types)`.
    /// `regions` are texts made by [`FunctionBuilder::region`].
    pub fn op_regions(
        &mut self,
        name: &str,
        operands: &[&Value],
        regions: &[String],
        attrs: &str,
        results: &[TensorType],
    ) -> Vec<Value> {
        let id = self.next;
        self.next += 1;
        let base = format!("%{id}");
        let values: Vec<Value> = if results.len() == 1 {
            vec![Value { name: base.clone(), ty: results[0].clone() }]
        } else {
            let tys = results.iter().enumerate();
            tys.map(|(i, ty)| Value { name: format!("{base}#{i}"), ty: ty.clone() }).collect()
        };
        let lhs = if results.len() == 1 { base } else { format!("{base}:{}", results.len()) };
        let names: Vec<&str> = operands.iter().map(|v| v.name.as_str()).collect();
        let types: Vec<String> = operands.iter().map(|v| v.ty.to_string()).collect();
        let result_types: Vec<String> = results.iter().map(|t| t.to_string()).collect();
        let regions = if regions.is_empty() { String::new() } else { format!(" ({})", regions.join(", ")) };
        let attrs = if attrs.is_empty() { String::new() } else { format!(" {{{attrs}}}") };
        let _ = writeln!(
            self.body,
            "    {lhs} = \"{name}\"({}){regions}{attrs} : ({}) -> ({})",
            names.join(", "),
            types.join(", "),
            result_types.join(", ")
        );
        values
    }

    /// The text of a region (one block) taking arguments of types `args`; `body` emits its ops
    /// into this builder and returns the values the region returns (`stablehlo.return`).
    pub fn region(
        &mut self,
        args: &[TensorType],
        body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
    ) -> String {
        let outer = std::mem::take(&mut self.body);
        let id = self.next;
        self.next += 1;
        let params: Vec<Value> = args
            .iter()
            .enumerate()
            .map(|(i, ty)| Value { name: format!("%r{id}_{i}"), ty: ty.clone() })
            .collect();
        let results = body(self, &params);
        let inner = std::mem::replace(&mut self.body, outer);
        let decl: Vec<String> = params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
        let names: Vec<&str> = results.iter().map(|v| v.name.as_str()).collect();
        let types: Vec<String> = results.iter().map(|v| v.ty.to_string()).collect();
        format!(
            "{{\n  ^bb0({}):\n{inner}      \"stablehlo.return\"({}) : ({}) -> ()\n    }}",
            decl.join(", "),
            names.join(", "),
            types.join(", ")
        )
    }

    /// An elementwise op whose result has the type of its first operand.
    pub fn same(&mut self, name: &str, operands: &[&Value]) -> Value {
        let ty = operands[0].ty.clone();
        self.op(name, operands, "", ty)
    }

    /// A constant of type `ty` with every element `value`.
    pub fn splat(&mut self, ty: &TensorType, value: f64) -> Value {
        let attrs = format!("value = dense<{}> : {ty}", literal(ty.element_type, value));
        self.op("stablehlo.constant", &[], &attrs, ty.clone())
    }

    /// `stablehlo.compare` with `direction` (`EQ`, `NE`, `LT`, `LE`, `GT`, `GE`); bool result.
    pub fn compare(&mut self, direction: &str, a: &Value, b: &Value) -> Value {
        let attrs = format!("comparison_direction = #stablehlo<comparison_direction {direction}>");
        let ty = TensorType { element_type: ElementType::Pred, dims: a.ty.dims.clone() };
        self.op("stablehlo.compare", &[a, b], &attrs, ty)
    }

    /// `stablehlo.select(pred, on_true, on_false)`.
    pub fn select(&mut self, pred: &Value, on_true: &Value, on_false: &Value) -> Value {
        let ty = on_true.ty.clone();
        self.op("stablehlo.select", &[pred, on_true, on_false], "", ty)
    }

    /// The finished module returning `results`.
    pub fn finish(self, results: &[&Value]) -> String {
        self.finish_aliased(results, &[])
    }

    /// The finished module returning `results`, where each `(arg, result)` pair lets the result
    /// be written into the argument's (donated) buffer (`tf.aliasing_output`, as JAX's
    /// `donate_argnums` emits). Arguments and results of a pair must have the same type.
    pub fn finish_aliased(self, results: &[&Value], aliases: &[(usize, usize)]) -> String {
        let args: Vec<String> = self
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| match aliases.iter().find(|(arg, _)| *arg == i) {
                Some((_, out)) => format!("{}: {} {{tf.aliasing_output = {out} : i32}}", a.name, a.ty),
                None => format!("{}: {}", a.name, a.ty),
            })
            .collect();
        let types: Vec<String> = results.iter().map(|v| v.ty.to_string()).collect();
        let names: Vec<&str> = results.iter().map(|v| v.name.as_str()).collect();
        format!(
            "module @oxtorch {{\n  func.func @main({}) -> ({}) {{\n{}    \"func.return\"({}) : ({}) -> ()\n  }}\n}}\n",
            args.join(", "),
            types.join(", "),
            self.body,
            names.join(", "),
            types.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emits_generic_ops() {
        let t = TensorType::new(ElementType::F32, &[2, 3]);
        let (mut b, args) = FunctionBuilder::new(&[t.clone(), t.clone()]);
        let sum = b.same("stablehlo.add", &[&args[0], &args[1]]);
        let text = b.finish(&[&sum]);
        assert_eq!(
            text,
            "module @oxtorch {\n  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>) {\n    \
             %0 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n    \
             \"func.return\"(%0) : (tensor<2x3xf32>) -> ()\n  }\n}\n"
        );
    }

    #[test]
    fn literals_are_exact() {
        assert_eq!(literal(ElementType::F32, f64::NEG_INFINITY), "0xFF800000");
        assert_eq!(literal(ElementType::F32, 1.0), "0x3F800000");
        assert_eq!(literal(ElementType::F64, 0.5), "0x3FE0000000000000");
        assert_eq!(literal(ElementType::BF16, 1.0), "0x3F80");
        assert_eq!(literal(ElementType::F16, 1.0), "0x3C00");
        assert_eq!(literal(ElementType::S32, -3.0), "-3");
        assert_eq!(literal(ElementType::Pred, 1.0), "true");
    }
}
