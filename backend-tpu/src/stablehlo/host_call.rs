//! Calls to oxtorch's host kernels (`xla::host_kernels`): the operands as the storage they live
//! in plus the strided view the kernel reads of it, so that a transposed, permuted, sliced or
//! narrowed operand reaches the kernel with no copy first.
//!
//! A call's last operand lists the views, `[offset, rank, dims..., strides...]` per viewed operand,
//! as s64; an offset the program takes at run time is spliced into the listing with a
//! `concatenate`.

use super::builder::{FunctionBuilder, Value};
use crate::pjrt::{ElementType, TensorType};

/// The offset of a view's element 0 in its storage: known when the program is built, or a 0-d
/// integer value the program takes at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostOffset {
    /// An offset known when the program is built.
    Static(i64),
    /// A 0-d integer value of the program.
    Runtime(Value),
}

/// The strided view a host kernel reads of a storage: sizes, strides in elements (0 for a
/// broadcast dim) and the offset of element 0, as the CPU backend's `Layout`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostView {
    /// sizes
    pub dims: Vec<i64>,
    /// strides, in elements
    pub strides: Vec<i64>,
    /// offset of element 0
    pub offset: HostOffset,
}

impl HostView {
    /// The row-major view of `dims` at offset 0.
    pub fn row_major(dims: &[i64]) -> HostView {
        let mut strides = vec![1i64; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * dims[d + 1].max(1);
        }
        HostView { dims: dims.to_vec(), strides, offset: HostOffset::Static(0) }
    }

    /// A view of `dims` and `strides` (`usize`s, as a `Layout` holds them) at `offset`. The
    /// stride of a dim of size 1, and every stride of an empty view, is listed as 0: such strides
    /// address nothing and may not fit in an i64 (`as_strided` allows any).
    pub fn strided(dims: &[usize], strides: &[usize], offset: HostOffset) -> HostView {
        let empty = dims.contains(&0);
        let strides =
            dims.iter().zip(strides).map(|(&n, &s)| if empty || n <= 1 { 0 } else { s as i64 }).collect();
        HostView { dims: dims.iter().map(|&n| n as i64).collect(), strides, offset }
    }
}

/// One viewed operand of a host kernel: a value holding the storage (its elements in row-major
/// order, whatever its dims) and the view of it the kernel reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostOperand {
    /// the storage
    pub storage: Value,
    /// what the kernel reads of it
    pub view: HostView,
}

/// The listing operand of `views`: `[offset, rank, dims..., strides...]` for each, in order.
pub fn view_listing(b: &mut FunctionBuilder, views: &[&HostView]) -> Value {
    // The listing in pieces: runs of constants, and runtime offsets as 1-element values.
    let mut pieces: Vec<Value> = Vec::new();
    let mut run: Vec<i64> = Vec::new();
    for v in views {
        match &v.offset {
            HostOffset::Static(o) => run.push(*o),
            HostOffset::Runtime(start) => {
                if !run.is_empty() {
                    pieces.push(s64_constant(b, &std::mem::take(&mut run)));
                }
                let wide = b.convert(start, ElementType::S64);
                pieces.push(b.reshape(&wide, &[1]));
            }
        }
        run.push(v.dims.len() as i64);
        run.extend_from_slice(&v.dims);
        run.extend_from_slice(&v.strides);
    }
    pieces.push(s64_constant(b, &run));
    let refs: Vec<&Value> = pieces.iter().collect();
    b.concat(&refs, 0)
}

/// A 1-D s64 constant of `values`.
pub fn s64_constant(b: &mut FunctionBuilder, values: &[i64]) -> Value {
    let n = values.len() as i64;
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    let attrs = format!("value = dense<[{}]> : tensor<{n}xi64>", items.join(", "));
    b.op("stablehlo.constant", &[], &attrs, TensorType::new(ElementType::S64, &[n]))
}

/// `stablehlo.custom_call` of the host kernel `target` on `operands`, with `results`, every
/// operand and result row-major.
pub fn host_call(
    b: &mut FunctionBuilder,
    target: &str,
    operands: &[&Value],
    results: &[TensorType],
) -> Vec<Value> {
    let layout = |rank: usize| {
        let dims: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
        format!("dense<[{}]> : tensor<{rank}xindex>", dims.join(", "))
    };
    let of = |ranks: &mut dyn Iterator<Item = usize>| ranks.map(layout).collect::<Vec<_>>().join(", ");
    let attrs = format!(
        "api_version = 4 : i32, backend_config = {{}}, call_target_name = \"{target}\", \
         operand_layouts = [{}], result_layouts = [{}]",
        of(&mut operands.iter().map(|v| v.ty().dims.len())),
        of(&mut results.iter().map(|t| t.dims.len())),
    );
    b.op_regions("stablehlo.custom_call", operands, &[], &attrs, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size-1 dim's stride, and every stride of an empty view, is listed as 0 (it addresses
    /// nothing, and `as_strided` may have made it too large for an i64); other strides are kept.
    #[test]
    fn strides_that_address_nothing_are_listed_as_zero() {
        let v = HostView::strided(&[2, 1, 3], &[3, usize::MAX, 1], HostOffset::Static(4));
        assert_eq!((v.dims, v.strides), (vec![2, 1, 3], vec![3, 0, 1]));
        let empty = HostView::strided(&[0, 5], &[usize::MAX, 7], HostOffset::Static(0));
        assert_eq!(empty.strides, vec![0, 0]);
    }
}
