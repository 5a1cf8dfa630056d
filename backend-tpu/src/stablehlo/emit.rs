//! Typed helpers over [`FunctionBuilder::op`]: the data-movement and structural ops every lowering
//! uses (convert, reshape, broadcast, transpose, slice, concatenate, pad, iota, reduce), each
//! computing its result type so that callers never spell one out.

use super::builder::{FunctionBuilder, Value};
use crate::pjrt::{ElementType, TensorType};

/// Whether `ty` is a floating-point type.
pub fn is_float(ty: ElementType) -> bool {
    matches!(ty, ElementType::F16 | ElementType::BF16 | ElementType::F32 | ElementType::F64)
}

/// Whether `ty` is an unsigned integer type.
pub fn is_unsigned(ty: ElementType) -> bool {
    matches!(ty, ElementType::U8 | ElementType::U16 | ElementType::U32 | ElementType::U64)
}

/// `array<i64: ...>` (the empty list is `array<i64>`).
pub fn array(values: &[i64]) -> String {
    if values.is_empty() {
        "array<i64>".to_string()
    } else {
        let v: Vec<String> = values.iter().map(i64::to_string).collect();
        format!("array<i64: {}>", v.join(", "))
    }
}

/// The `padding` attribute of reduce_window and convolution: `dense<[[lo, hi], ...]> : tensor<Nx2xi64>`.
pub fn dense_padding(pads: &[(i64, i64)]) -> String {
    let rows: Vec<String> = pads.iter().map(|(lo, hi)| format!("[{lo}, {hi}]")).collect();
    format!("dense<[{}]> : tensor<{}x2xi64>", rows.join(", "), pads.len())
}

/// `dims` as `i64`s.
pub fn dims_i64(dims: &[usize]) -> Vec<i64> {
    dims.iter().map(|&d| d as i64).collect()
}

/// The lowest value of `ty` (the identity of max): -∞, the integer minimum, or false.
pub fn lowest(ty: ElementType) -> f64 {
    match ty {
        ElementType::Pred | ElementType::U8 | ElementType::U16 | ElementType::U32 | ElementType::U64 => 0.0,
        ElementType::S8 => i8::MIN as f64,
        ElementType::S16 => i16::MIN as f64,
        ElementType::S32 => i32::MIN as f64,
        ElementType::S64 => i64::MIN as f64,
        _ => f64::NEG_INFINITY,
    }
}

/// The highest value of `ty` (the identity of min): +∞, the integer maximum, or true.
pub fn highest(ty: ElementType) -> f64 {
    match ty {
        ElementType::Pred => 1.0,
        ElementType::U8 => u8::MAX as f64,
        ElementType::U16 => u16::MAX as f64,
        ElementType::U32 => u32::MAX as f64,
        ElementType::U64 => u64::MAX as f64,
        ElementType::S8 => i8::MAX as f64,
        ElementType::S16 => i16::MAX as f64,
        ElementType::S32 => i32::MAX as f64,
        ElementType::S64 => i64::MAX as f64,
        _ => f64::INFINITY,
    }
}

/// `ty` with another element type.
pub fn with_element(ty: &TensorType, element_type: ElementType) -> TensorType {
    TensorType { element_type, dims: ty.dims.clone() }
}

impl FunctionBuilder {
    /// A 0-d constant.
    pub fn scalar(&mut self, element_type: ElementType, value: f64) -> Value {
        self.splat(&TensorType::new(element_type, &[]), value)
    }

    /// `x` converted to `element_type` (`x` itself when it already has it).
    pub fn convert(&mut self, x: &Value, element_type: ElementType) -> Value {
        if x.ty().element_type == element_type {
            return x.clone();
        }
        self.op("stablehlo.convert", &[x], "", with_element(x.ty(), element_type))
    }

    /// `x` reshaped (row-major) to `dims` (`x` itself when the dims are unchanged).
    pub fn reshape(&mut self, x: &Value, dims: &[i64]) -> Value {
        if x.ty().dims == dims {
            return x.clone();
        }
        let ty = TensorType::new(x.ty().element_type, dims);
        let out = self.op("stablehlo.reshape", &[x], "", ty);
        self.record_reinterpretation(&out, x);
        out
    }

    /// `broadcast_in_dim`: dim `i` of `x` becomes dim `map[i]` of a result with `dims`.
    pub fn broadcast(&mut self, x: &Value, dims: &[i64], map: &[i64]) -> Value {
        if x.ty().dims == dims && map.iter().enumerate().all(|(i, &m)| m == i as i64) {
            return x.clone();
        }
        let ty = TensorType::new(x.ty().element_type, dims);
        let out = self.op(
            "stablehlo.broadcast_in_dim",
            &[x],
            &format!("broadcast_dimensions = {}", array(map)),
            ty,
        );
        self.record_broadcast(&out, x, map);
        // Inserting unit dims, the others in order and unchanged, keeps the row-major order.
        let xd = &x.ty().dims;
        let in_order = map.len() == xd.len()
            && map.windows(2).all(|w| w[0] < w[1])
            && map.iter().zip(xd).all(|(&m, &n)| dims.get(m as usize) == Some(&n));
        let inserted_units = dims.iter().enumerate().all(|(i, &n)| n == 1 || map.contains(&(i as i64)));
        if in_order && inserted_units {
            self.record_reinterpretation(&out, x);
        }
        out
    }

    /// A 0-d `x` broadcast to `dims`.
    pub fn broadcast_scalar(&mut self, x: &Value, dims: &[i64]) -> Value {
        self.broadcast(x, dims, &[])
    }

    /// A constant like `x`'s type (or `element_type`) with every element `value`.
    pub fn full_like(&mut self, x: &Value, element_type: ElementType, value: f64) -> Value {
        self.splat(&with_element(x.ty(), element_type), value)
    }

    /// `transpose` with `perm` (result dim `i` is input dim `perm[i]`).
    pub fn transpose(&mut self, x: &Value, perm: &[i64]) -> Value {
        if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
            return x.clone();
        }
        let dims: Vec<i64> = perm.iter().map(|&p| x.ty().dims[p as usize]).collect();
        let ty = TensorType::new(x.ty().element_type, &dims);
        let t = self.op("stablehlo.transpose", &[x], &format!("permutation = {}", array(perm)), ty);
        self.record_transpose(&t, x, perm);
        t
    }

    /// `slice` from `start` (inclusive) to `limit` (exclusive) with `strides`.
    pub fn slice(&mut self, x: &Value, start: &[i64], limit: &[i64], strides: &[i64]) -> Value {
        let dims: Vec<i64> =
            (0..start.len())
                .map(|i| {
                    if limit[i] <= start[i] {
                        0
                    } else {
                        (limit[i] - start[i] + strides[i] - 1) / strides[i]
                    }
                })
                .collect();
        if dims == x.ty().dims {
            return x.clone();
        }
        let ty = TensorType::new(x.ty().element_type, &dims);
        let attrs = format!(
            "start_indices = {}, limit_indices = {}, strides = {}",
            array(start),
            array(limit),
            array(strides)
        );
        self.op("stablehlo.slice", &[x], &attrs, ty)
    }

    /// `x[start:limit]` along `dim` (unit stride).
    pub fn slice_dim(&mut self, x: &Value, dim: usize, start: i64, limit: i64) -> Value {
        let mut s = vec![0; x.ty().dims.len()];
        let mut l = x.ty().dims.clone();
        s[dim] = start;
        l[dim] = limit;
        self.slice(x, &s, &l, &vec![1; s.len()])
    }

    /// `concatenate` along `dim` (one value is returned as is).
    pub fn concat(&mut self, values: &[&Value], dim: usize) -> Value {
        if values.len() == 1 {
            return values[0].clone();
        }
        let mut dims = values[0].ty().dims.clone();
        dims[dim] = values.iter().map(|v| v.ty().dims[dim]).sum();
        let ty = TensorType::new(values[0].ty().element_type, &dims);
        self.op("stablehlo.concatenate", values, &format!("dimension = {dim} : i64"), ty)
    }

    /// `pad` with the 0-d `value`: `low`/`high` elements at each end and `interior` between neighbours.
    pub fn pad(&mut self, x: &Value, value: &Value, low: &[i64], high: &[i64], interior: &[i64]) -> Value {
        let dims: Vec<i64> = (0..low.len())
            .map(|i| {
                let n = x.ty().dims[i];
                low[i] + high[i] + n + (n - 1).max(0) * interior[i]
            })
            .collect();
        let ty = TensorType::new(x.ty().element_type, &dims);
        let attrs = format!(
            "edge_padding_low = {}, edge_padding_high = {}, interior_padding = {}",
            array(low),
            array(high),
            array(interior)
        );
        self.op("stablehlo.pad", &[x, value], &attrs, ty)
    }

    /// `iota` of type `ty` counting along `dim`.
    pub fn iota(&mut self, ty: &TensorType, dim: usize) -> Value {
        self.op("stablehlo.iota", &[], &format!("iota_dimension = {dim} : i64"), ty.clone())
    }

    /// `reduce` of `inputs` (one shape) over `dims` with initial values `inits` (0-d) and a body
    /// taking `(accumulators..., elements...)` and returning the new accumulators; the results drop
    /// the reduced dims.
    pub fn reduce(
        &mut self,
        inputs: &[&Value],
        inits: &[&Value],
        dims: &[usize],
        body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
    ) -> Vec<Value> {
        let scalars: Vec<TensorType> =
            inputs.iter().map(|v| TensorType::new(v.ty().element_type, &[])).collect();
        let mut args = scalars.clone();
        args.extend(scalars);
        let region = self.region(&args, body);
        let kept: Vec<i64> = (0..inputs[0].ty().dims.len())
            .filter(|d| !dims.contains(d))
            .map(|d| inputs[0].ty().dims[d])
            .collect();
        let results: Vec<TensorType> =
            inputs.iter().map(|v| TensorType::new(v.ty().element_type, &kept)).collect();
        let mut operands: Vec<&Value> = inputs.to_vec();
        operands.extend(inits);
        let attrs = format!("dimensions = {}", array(&dims_i64(dims)));
        self.op_regions("stablehlo.reduce", &operands, &[region], &attrs, &results)
    }

    /// A one-input `reduce` with the binary op `name` (e.g. `stablehlo.add`) and initial value
    /// `init`, keeping the reduced dims with size 1.
    pub fn reduce_keep(&mut self, x: &Value, name: &str, init: f64, dims: &[usize]) -> Value {
        let init = self.scalar(x.ty().element_type, init);
        let name = name.to_string();
        let r = self.reduce(&[x], &[&init], dims, |b, a| vec![b.same(&name, &[&a[0], &a[1]])]);
        let mut keep = x.ty().dims.clone();
        for &d in dims {
            keep[d] = 1;
        }
        self.reshape(&r[0], &keep)
    }

    /// `reduce_window` of one input with the binary op `name`, initial value `init`, window sizes
    /// `window`, strides and `(low, high)` padding per dim.
    pub fn reduce_window(
        &mut self,
        x: &Value,
        name: &str,
        init: f64,
        window: &[i64],
        strides: &[i64],
        padding: &[(i64, i64)],
    ) -> Value {
        let name = name.to_string();
        self.reduce_window_with(x, init, window, strides, padding, |b, a| b.same(&name, &[&a[0], &a[1]]))
    }

    /// [`FunctionBuilder::reduce_window`] with a body `(accumulator, element) -> accumulator`.
    pub fn reduce_window_with(
        &mut self,
        x: &Value,
        init: f64,
        window: &[i64],
        strides: &[i64],
        padding: &[(i64, i64)],
        body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Value,
    ) -> Value {
        let et = x.ty().element_type;
        let s = TensorType::new(et, &[]);
        let region = self.region(&[s.clone(), s], |b, a| vec![body(b, a)]);
        let init = self.scalar(et, init);
        let dims: Vec<i64> = (0..window.len())
            .map(|i| {
                let padded = x.ty().dims[i] + padding[i].0 + padding[i].1;
                if padded < window[i] {
                    0
                } else {
                    (padded - window[i]) / strides[i] + 1
                }
            })
            .collect();
        let attrs = format!(
            "window_dimensions = {}, window_strides = {}, padding = {}",
            array(window),
            array(strides),
            dense_padding(padding)
        );
        let ty = TensorType::new(et, &dims);
        self.op_regions("stablehlo.reduce_window", &[x, &init], &[region], &attrs, &[ty]).remove(0)
    }

    /// Elementwise maximum (`max`) or minimum, NaN-propagating for floats as torch is (the CPU
    /// plugin's `stablehlo.maximum`/`minimum` are not: they behave like `a > b ? a : b`).
    pub fn max_min(&mut self, max: bool, a: &Value, b: &Value) -> Value {
        let r = self.same(if max { "stablehlo.maximum" } else { "stablehlo.minimum" }, &[a, b]);
        if !is_float(a.ty().element_type) {
            return r;
        }
        let a_nan = self.compare("NE", a, a);
        let b_nan = self.compare("NE", b, b);
        let r = self.select(&b_nan, b, &r);
        self.select(&a_nan, a, &r)
    }

    /// A constant of type `ty` holding `values` in row-major order (as f64, converted to the
    /// element type by [`super::builder::literal`]).
    pub fn constant(&mut self, ty: &TensorType, values: &[f64]) -> Value {
        if values.is_empty() || values.iter().all(|v| v.to_bits() == values[0].to_bits()) {
            return self.splat(ty, values.first().copied().unwrap_or(0.0));
        }
        let lits: Vec<String> = values.iter().map(|&v| super::builder::literal(ty.element_type, v)).collect();
        let flat = TensorType::new(ty.element_type, &[values.len() as i64]);
        let attrs = format!("value = dense<[{}]> : {flat}", lits.join(", "));
        let v = self.op("stablehlo.constant", &[], &attrs, flat);
        self.reshape(&v, &ty.dims)
    }

    /// `x` gathered along `dim` at the (in-range) positions `idx`: dim `dim` of the result has
    /// `idx.len()` elements, `out[.., j, ..] = x[.., idx[j], ..]`.
    pub fn take(&mut self, x: &Value, dim: usize, idx: &[i64]) -> Value {
        let rank = x.ty().dims.len();
        let ids = self.constant(
            &TensorType::new(ElementType::S64, &[idx.len() as i64]),
            &idx.iter().map(|&i| i as f64).collect::<Vec<_>>(),
        );
        let offset: Vec<String> = (0..rank).filter(|&d| d != dim).map(|d| d.to_string()).collect();
        let mut sizes = x.ty().dims.clone();
        sizes[dim] = 1;
        let mut dims = x.ty().dims.clone();
        dims[dim] = idx.len() as i64;
        if x.ty().dims[dim] == 0 {
            // Nothing to take (a window of 1 does not fit the empty dim, so no gather).
            return self.splat(&TensorType::new(x.ty().element_type, &dims), 0.0);
        }
        let attrs = format!(
            "dimension_numbers = #stablehlo.gather<offset_dims = [{}], collapsed_slice_dims = [{dim}], \
             start_index_map = [{dim}], index_vector_dim = 1>, slice_sizes = {}, indices_are_sorted = false",
            offset.join(", "),
            array(&sizes)
        );
        self.op("stablehlo.gather", &[x, &ids], &attrs, TensorType::new(x.ty().element_type, &dims))
    }
}
