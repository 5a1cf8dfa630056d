//! Generalizing a fused graph that reads dynamic (padded) buffers to their bucket, so that every
//! row count of a bucket runs one program (see `xla::dynamic`).
//!
//! A dynamic value is a flat buffer of `n · c` elements whose rows (dim 0 of its tensor, `c`
//! elements each) are padded to `bucket · c`. The graph is rewritten with `bucket` for `n` wherever
//! a size counts rows, and is accepted only when that cannot change a valid element:
//!
//! - every view of a dynamic value is whole rows: dim 0 strides over rows (`q` view rows per row,
//!   covering all of them) and the other dims stay inside one view row;
//! - every op keeps rows apart: its *row inputs* (all inputs of an elementwise op, the left factor
//!   of a product, the ids of an embedding, ...) have the rows along dim 0, dynamic or broadcast
//!   from one row (stride 0); its other inputs (a weight) are not dynamic; and it neither reduces,
//!   normalises nor indexes along dim 0.
//!
//! Then the padding rows compute garbage that no valid row ever reads, and every output of an op
//! with a dynamic input is dynamic too. Anything else is refused with the reason, and the graph
//! runs with its exact shapes (compiled per row count, never a wrong result).

use std::sync::Arc;

use oxtorch_core::ops::{NnOp, Prim, UnaryOp};
use oxtorch_core::Layout;

use super::node::{Arg, Data, Node, Step};
use crate::xla::dynamic::Extent;

/// The bucket-sized view of each node input and the padded length of each dynamic output.
pub(super) struct Generalized {
    /// The row count of the graph's dynamic values and their bucket.
    pub extent: Extent,
    /// Per node, per view input: the layout and storage length the program uses.
    pub views: Vec<Vec<(Layout, usize)>>,
    /// Per node, per output: its padded length when it is dynamic.
    pub outputs: Vec<Vec<Option<usize>>>,
}

/// How an op uses an input.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// Rows along dim 0 that the op keeps apart.
    Rows,
    /// A whole value every row uses (a weight); must not be dynamic.
    Whole,
}

/// The roles of a step's inputs, or `None` when it mixes rows (reads along dim 0).
fn roles(step: &Step, ranks: &[usize]) -> Option<Vec<Role>> {
    use Role::{Rows, Whole};
    let all_rows = || Some(vec![Rows; ranks.len()]);
    match step {
        Step::CopyInto | Step::FillInto => all_rows(),
        Step::Full { .. } => Some(Vec::new()),
        Step::Prim(prim) => match prim {
            Prim::Unary(UnaryOp::Softmax { dim, .. }) => (*dim != 0).then(|| vec![Rows]),
            Prim::Unary(_)
            | Prim::Binary(_)
            | Prim::Compare(_)
            | Prim::Where
            | Prim::Cast(_)
            | Prim::Copy => all_rows(),
            Prim::Reduce { dims, .. } => (!dims.contains(&0)).then(|| vec![Rows]),
            Prim::ArgReduce { dim, .. } => (*dim != 0).then(|| vec![Rows]),
            Prim::MatMul => match ranks.first() {
                Some(2) => Some(vec![Rows, Whole]),
                Some(r) if *r > 2 => all_rows(),
                _ => None,
            },
            Prim::Nn(nn) => match nn {
                NnOp::Embedding => Some(vec![Whole, Rows]),
                NnOp::Conv2d { .. } => Some(vec![Rows, Whole]),
                NnOp::GeluTanhBackward | NnOp::CrossEntropy { .. } => all_rows(),
                NnOp::MaxPool { taps } | NnOp::AvgPool { taps, .. } => {
                    (taps.len() < ranks[0]).then(|| vec![Rows])
                }
                NnOp::Resample { taps } => (taps.len() < ranks[0]).then(|| vec![Rows]),
                _ => None,
            },
            _ => None,
        },
    }
}

/// `layout` of a dynamic value (`n · c` elements, rows of `c`) as whole rows: `q` view rows per
/// row and the layout with `bucket · q` of them; `None` when the view is not whole rows.
fn rows_view(layout: &Layout, c: usize, e: Extent) -> Option<(usize, Layout)> {
    let (dims, strides) = (layout.dims(), layout.strides());
    let (&s0, &t0) = (dims.first()?, strides.first()?);
    if t0 == 0 || dims.contains(&0) || s0 * t0 != e.n * c || !c.is_multiple_of(t0) {
        return None;
    }
    let inner: usize = dims[1..].iter().zip(&strides[1..]).map(|(s, t)| (s - 1) * t).sum();
    if layout.offset() + inner >= t0 {
        return None;
    }
    let q = c / t0;
    Some((q, with_rows(layout, e.bucket * q)?))
}

/// `layout` with `rows` for its dim 0.
fn with_rows(layout: &Layout, rows: usize) -> Option<Layout> {
    let mut dims = layout.dims().to_vec();
    dims[0] = rows;
    Layout::new(dims, layout.strides().to_vec(), layout.offset()).ok()
}

/// The step's name in refusal reasons.
fn step_name(step: &Step) -> &'static str {
    match step {
        Step::Prim(p) => p.name(),
        Step::CopyInto => "copy_",
        Step::FillInto => "fill_",
        Step::Full { .. } => "full",
    }
}

/// Generalizes `order` to the bucket of its dynamic inputs: `Ok(None)` when it reads none,
/// `Err(reason)` when it cannot be (it then runs with its exact shapes).
pub(super) fn generalize(order: &[Arc<Node>]) -> Result<Option<Generalized>, String> {
    // The graph's row count: every dynamic leaf must agree.
    let mut extent: Option<Extent> = None;
    for node in order {
        for arg in node.args().iter() {
            if let Arg::View { data, .. } = arg {
                if data.pending().is_none() {
                    if let Some(e) = data.extent() {
                        match extent {
                            Some(x) if x != e => {
                                return Err(format!("it reads dynamic tensors of {} and {} rows", x.n, e.n))
                            }
                            _ => extent = Some(e),
                        }
                    }
                }
            }
        }
    }
    let Some(e) = extent else { return Ok(None) };
    let position: std::collections::HashMap<u64, usize> =
        order.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    // Per node, per output: the elements per row when the output is dynamic.
    let mut row_len: Vec<Vec<Option<usize>>> = Vec::with_capacity(order.len());
    let mut views = Vec::with_capacity(order.len());
    let mut outputs = Vec::with_capacity(order.len());
    for node in order {
        let args = node.args();
        let inputs: Vec<(&Layout, usize, Option<usize>)> = args
            .iter()
            .filter_map(|a| match a {
                Arg::View { data, len, layout, .. } => {
                    Some((layout, *len, source_rows(data, *len, e, &position, &row_len)))
                }
                Arg::Scalar(..) => None,
            })
            .collect();
        if inputs.iter().all(|i| i.2.is_none()) {
            views.push(inputs.iter().map(|&(l, len, _)| (l.clone(), len)).collect());
            row_len.push(vec![None; node.outputs.len()]);
            outputs.push(vec![None; node.outputs.len()]);
            continue;
        }
        let name = step_name(&node.step);
        let ranks: Vec<usize> = inputs.iter().map(|i| i.0.rank()).collect();
        let roles =
            roles(&node.step, &ranks).ok_or_else(|| format!("{name} mixes the rows of a dynamic tensor"))?;
        if matches!(node.step, Step::CopyInto) && inputs[0].2.is_none() {
            return Err("copy_ writes a dynamic tensor into a static one".to_string());
        }
        // Rows of the dynamic inputs: q view rows per row, the same for all.
        let mut q = None;
        let mut generalized: Vec<Option<(Layout, usize)>> = vec![None; inputs.len()];
        for (i, &(layout, _, c)) in inputs.iter().enumerate() {
            let Some(c) = c else { continue };
            if roles.get(i) != Some(&Role::Rows) {
                return Err(format!("{name} reads a dynamic tensor across its rows"));
            }
            let (qi, view) = rows_view(layout, c, e)
                .ok_or_else(|| format!("{name} reads a view of a dynamic tensor that is not whole rows"))?;
            if q.is_some_and(|q| q != qi) {
                return Err(format!("{name} pairs rows of different sizes"));
            }
            q = Some(qi);
            generalized[i] = Some((view, e.bucket * c));
        }
        let q = q.expect("a dynamic input");
        // Static row inputs must be one row broadcast to all of them.
        for (i, &(layout, len, c)) in inputs.iter().enumerate() {
            if c.is_some() || roles.get(i) != Some(&Role::Rows) {
                continue;
            }
            let broadcast = layout.strides().first() == Some(&0) && layout.dims().first() == Some(&(e.n * q));
            let view = with_rows(layout, e.bucket * q).filter(|_| broadcast).ok_or_else(|| {
                format!("{name} pairs a dynamic tensor with a static one of {:?}", layout.dims())
            })?;
            generalized[i] = Some((view, len));
        }
        views.push(
            inputs
                .iter()
                .zip(generalized)
                .map(|(&(l, len, _), g)| g.unwrap_or_else(|| (l.clone(), len)))
                .collect(),
        );
        let mut rows = Vec::with_capacity(node.outputs.len());
        for &(_, len) in &node.outputs {
            if !len.is_multiple_of(e.n) {
                return Err(format!("{name} returns {len} elements, not whole rows"));
            }
            rows.push(Some(len / e.n));
        }
        outputs.push(rows.iter().map(|c| c.map(|c| c * e.bucket)).collect());
        row_len.push(rows);
    }
    Ok(Some(Generalized { extent: e, views, outputs }))
}

/// The elements per row of a dynamic view source: a padded leaf, or a dynamic output of a node
/// earlier in the graph.
fn source_rows(
    data: &Data,
    len: usize,
    e: Extent,
    position: &std::collections::HashMap<u64, usize>,
    row_len: &[Vec<Option<usize>>],
) -> Option<usize> {
    match data.pending() {
        Some(node) => {
            let Data::Pending(_, out) = data else { return None };
            position.get(&node.id).and_then(|&at| row_len[at][*out])
        }
        None => data.extent().map(|_| len / e.n),
    }
}
