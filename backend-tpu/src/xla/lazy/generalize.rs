//! Generalizing a fused graph that reads dynamic (padded) buffers to their bucket, so that every
//! row count of a bucket runs one program (see `xla::dynamic`).
//!
//! A dynamic value is a flat buffer of `n · c` elements whose rows (dim 0 of its tensor, `c`
//! elements each) are padded to `bucket · c`. The graph is rewritten with `bucket` for `n` wherever
//! a size counts rows, and is accepted only when that cannot change a valid element:
//!
//! - every view of a dynamic value is whole rows: one dim (the *row dim*) strides over the rows
//!   (`q` view rows per row, covering all of them) and the other dims stay inside one view row;
//! - every op either keeps rows apart, or consumes them under a mask:
//!   - *keeping rows apart*: elementwise ops, a product of rows by a weight (or batched along the
//!     row dim), reductions, softmax, arg-reductions, sorts, scans, gathers and scatters along
//!     other dims, `cat` along later dims, embeddings of row ids, convolutions and pooling of a batch, cross
//!     entropy of rows. Its other inputs are weights (never dynamic), one row broadcast to all
//!     (stride 0), or a `full` of the graph (filled at the bucket's size). Its outputs are
//!     dynamic: the row dim must be outermost (only size-1 dims before it), so the valid elements
//!     stay a prefix. The padding rows compute garbage that no valid row ever reads.
//!   - *consuming rows*: a reduction or arg-reduction over the row dim, a softmax along it, a
//!     product contracting it. The program first replaces the padding of the flat input by the
//!     op's neutral value (`select(iota < n · c, x, fill)`: 0 for a sum or a product's factors,
//!     1 for a product, the dtype's least value for a maximum or softmax, its greatest for a
//!     minimum), with `n` a runtime
//!     argument. The result no longer has rows (a softmax keeps them: its padding is 0).
//!
//! Anything else is refused with the reason, and the graph runs with its exact shapes (compiled
//! per row count, never a wrong result).

use std::collections::HashMap;
use std::sync::Arc;

use oxtorch_core::ops::{ArgReduceOp, IndexOp, NnOp, Prim, ReduceOp, ShapeOp, SortOp, UnaryOp};
use oxtorch_core::{DType, Layout};

use super::node::{Arg, Data, Node, Step};
use crate::xla::dynamic::Extent;

/// The padding of a node input replaced by a neutral value before the op reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Mask {
    /// Valid elements per row of the flat input (`n · row_len` are valid).
    pub row_len: usize,
    /// What the padding becomes.
    pub fill: f64,
}

/// How the program reads one node input.
#[derive(Clone, Debug)]
pub(super) struct View {
    /// The layout (bucket-sized in a generalized node).
    pub layout: Layout,
    /// The storage length.
    pub len: usize,
    /// The padding replaced by a neutral value first.
    pub mask: Option<Mask>,
    /// The input is a `full` of this graph read as rows: the program fills `len` elements with
    /// its value for this input, instead of reading the `full` of the recorded size.
    pub refill: bool,
}

impl View {
    fn recorded(layout: &Layout, len: usize) -> View {
        View { layout: layout.clone(), len, mask: None, refill: false }
    }
}

/// The bucket-sized view of each node input, the masks, and the padded length of each dynamic
/// output.
pub(super) struct Generalized {
    /// The row count of the graph's dynamic values and their bucket.
    pub extent: Extent,
    /// Per node, per view input: how the program reads it.
    pub views: Vec<Vec<View>>,
    /// Per node, per output: its padded length when it is dynamic.
    pub outputs: Vec<Vec<Option<usize>>>,
    /// Whether some input is masked: the program then takes `n` as an `i64` argument.
    pub masked: bool,
}

/// How an op that keeps rows apart uses an input.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// Rows along the row dim.
    Rows,
    /// A whole value every row uses (a weight); must not be dynamic.
    Whole,
}

/// The roles of a step's inputs when it keeps rows apart along dim `p` of its row inputs, or
/// `None` when it reads across that dim.
fn keeps_rows(step: &Step, p: usize, ranks: &[usize]) -> Option<Vec<Role>> {
    use Role::{Rows, Whole};
    let all_rows = || Some(vec![Rows; ranks.len()]);
    match step {
        Step::CopyInto | Step::FillInto => all_rows(),
        Step::Full { .. } => Some(Vec::new()),
        Step::Prim(prim) => match prim {
            Prim::Unary(UnaryOp::Softmax { dim, .. }) => (*dim != p).then(|| vec![Rows]),
            Prim::Unary(_)
            | Prim::Binary(_)
            | Prim::Compare(_)
            | Prim::Where
            | Prim::Cast(_)
            | Prim::Copy => all_rows(),
            Prim::Reduce { dims, .. } => (!dims.contains(&p)).then(|| vec![Rows]),
            // Only after the row dim: a `cat` before it (a `stack` of rows) would put its
            // inputs' padding between their valid rows.
            Prim::Shape(ShapeOp::Cat { dim, .. }) => (*dim > p).then(all_rows)?,
            // Along another dim, an index only moves elements within its row (padding rows'
            // garbage indices are clamped or dropped by XLA, within the padding rows).
            Prim::Index(IndexOp::Gather { dim } | IndexOp::Scatter { dim, .. }) => {
                (*dim != p).then(all_rows)?
            }
            Prim::Sort(
                SortOp::Sort { dim, .. }
                | SortOp::TopK { dim, .. }
                | SortOp::KthValue { dim, .. }
                | SortOp::Median { dim, .. }
                | SortOp::Mode { dim }
                | SortOp::CumSum { dim }
                | SortOp::CumProd { dim }
                | SortOp::CumMax { dim }
                | SortOp::CumMin { dim }
                | SortOp::LogCumSumExp { dim },
            ) => (*dim != p && ranks.len() == 1).then(|| vec![Rows]),
            Prim::ArgReduce { dim, .. } => (*dim != p).then(|| vec![Rows]),
            Prim::MatMul => match ranks.first() {
                Some(2) if p == 0 => Some(vec![Rows, Whole]),
                Some(&r) if r > 2 && p < r - 2 => all_rows(),
                _ => None,
            },
            Prim::Nn(nn) => match nn {
                NnOp::Embedding => Some(vec![Whole, Rows]),
                NnOp::Conv2d { .. } => (p == 0).then(|| vec![Rows, Whole]),
                NnOp::GeluTanhBackward => all_rows(),
                NnOp::CrossEntropy { .. } | NnOp::CrossEntropyBackward { .. } => (p == 0).then(all_rows)?,
                NnOp::MaxPool { taps } | NnOp::AvgPool { taps, .. } => {
                    (p + taps.len() < ranks[0]).then(|| vec![Rows])
                }
                NnOp::Resample { taps } => (p + taps.len() < ranks[0]).then(|| vec![Rows]),
                _ => None,
            },
            _ => None,
        },
    }
}

/// The neutral fill of each input of a step that consumes the rows along their row dims `p`
/// (every input dynamic, under a mask), or `None` when it does not.
fn consumes_rows(step: &Step, p: &[Option<usize>], ranks: &[usize], dtype: DType) -> Option<Vec<f64>> {
    let (lowest, highest) = bounds(dtype);
    let Step::Prim(prim) = step else { return None };
    match prim {
        Prim::Reduce { op, dims } if p[0].is_some_and(|p| dims.contains(&p)) => {
            let fill = match op {
                ReduceOp::Sum | ReduceOp::Any => 0.0,
                ReduceOp::Prod | ReduceOp::All => 1.0,
                ReduceOp::Max => lowest,
                ReduceOp::Min => highest,
            };
            Some(vec![fill])
        }
        Prim::ArgReduce { op, dim } if p[0] == Some(*dim) => Some(vec![match op {
            ArgReduceOp::Max => lowest,
            ArgReduceOp::Min => highest,
        }]),
        Prim::Unary(UnaryOp::Softmax { dim, .. }) if p[0] == Some(*dim) => Some(vec![f64::NEG_INFINITY]),
        // A product contracting the rows: `a`'s last dim and `b`'s second-to-last, both dynamic.
        Prim::MatMul => {
            let r = ranks[0];
            (p[0] == Some(r - 1) && p[1] == Some(r - 2)).then(|| vec![0.0, 0.0])
        }
        _ => None,
    }
}

/// The least and greatest values of `dtype` (infinities for floats): the neutral padding of a
/// maximum and a minimum. Integer bounds are exact in `f64` or round to a value that saturates to
/// them (`i64::MAX`).
fn bounds(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::Bool => (0.0, 1.0),
        DType::U8 => (0.0, u8::MAX as f64),
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => (f64::NEG_INFINITY, f64::INFINITY),
    }
}

/// `layout` of a dynamic value (`n · c` elements, rows of `c`) as whole rows: the row dim, `q`
/// view rows per row, and the layout with `bucket · q` of them; `None` when the view is not whole
/// rows. Only with one row can two dims qualify, and then the first is taken (a bucket of one row
/// has no padding, so either reading gives the same program).
fn rows_view(layout: &Layout, c: usize, e: Extent) -> Option<(usize, usize, Layout)> {
    let (dims, strides) = (layout.dims(), layout.strides());
    if dims.contains(&0) {
        return None;
    }
    let p = (0..dims.len()).find(|&d| {
        let t = strides[d];
        t != 0 && dims[d] * t == e.n * c && c.is_multiple_of(t)
    })?;
    let inner: usize = (0..dims.len()).filter(|&d| d != p).map(|d| (dims[d] - 1) * strides[d]).sum();
    if layout.offset() + inner >= strides[p] {
        return None;
    }
    let q = c / strides[p];
    Some((p, q, with_rows(layout, p, e.bucket * q)?))
}

/// `layout` with `rows` for its dim `p`.
fn with_rows(layout: &Layout, p: usize, rows: usize) -> Option<Layout> {
    let mut dims = layout.dims().to_vec();
    dims[p] = rows;
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

/// A view input of a node: its recorded layout and length, its dtype, the elements per row of its
/// source when that is dynamic, and whether the source is a `full` of this graph (a constant
/// that can be read as rows of any count).
struct Input<'a> {
    layout: &'a Layout,
    len: usize,
    dtype: DType,
    row_len: Option<usize>,
    full: bool,
    /// The position of the source node when it is in the graph.
    source: Option<usize>,
}

/// Generalizes `order` to the bucket of its dynamic inputs: `Ok(None)` when it reads none,
/// `Err(reason)` when it cannot be (it then runs with its exact shapes).
pub(super) fn generalize(order: &[Arc<Node>]) -> Result<Option<Generalized>, String> {
    let Some(e) = graph_extent(order)? else { return Ok(None) };
    let position: HashMap<u64, usize> = order.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    // Per node, per output: the elements per row when the output is dynamic.
    let mut row_len: Vec<Vec<Option<usize>>> = Vec::with_capacity(order.len());
    let mut g = Generalized { extent: e, views: Vec::new(), outputs: Vec::new(), masked: false };
    // The bucket-sized lengths each `full` is read as rows with.
    let mut refilled: HashMap<usize, Vec<usize>> = HashMap::new();
    for node in order {
        let args = node.args();
        let inputs: Vec<Input<'_>> = args
            .iter()
            .filter_map(|a| match a {
                Arg::View { data, dtype, len, layout } => Some(Input {
                    layout,
                    len: *len,
                    dtype: *dtype,
                    row_len: source_rows(data, *len, e, &position, &row_len),
                    full: data
                        .pending()
                        .is_some_and(|n| position.contains_key(&n.id) && matches!(n.step, Step::Full { .. })),
                    source: data.pending().and_then(|n| position.get(&n.id).copied()),
                }),
                Arg::Scalar(..) => None,
            })
            .collect();
        let (views, outputs) = if let Some(q) = row_constant(node, &inputs, e) {
            let views = inputs
                .iter()
                .map(|i| View {
                    layout: with_rows(i.layout, 0, e.bucket * q).expect("rank"),
                    ..View::recorded(i.layout, i.len)
                })
                .collect();
            (views, node.outputs.iter().map(|o| Some(o.1 / e.n)).collect())
        } else if inputs.iter().all(|i| i.row_len.is_none()) {
            let views = inputs.iter().map(|i| View::recorded(i.layout, i.len)).collect();
            (views, vec![None; node.outputs.len()])
        } else {
            generalize_node(node, &inputs, e)?
        };
        g.masked |= views.iter().any(|v: &View| v.mask.is_some());
        for (input, view) in inputs.iter().zip(&views) {
            if view.refill {
                let at = input.source.expect("a refilled full is in the graph");
                refilled.entry(at).or_default().push(view.len);
            }
        }
        g.views.push(views);
        g.outputs.push(outputs.iter().map(|c| c.map(|c| c * e.bucket)).collect());
        row_len.push(outputs);
    }
    // A `full` read as rows of one size is computed at the bucket's size, and is dynamic itself
    // (a later graph may read it: autograd saves such constants); its other readers read the
    // prefix they recorded.
    for (at, lens) in refilled {
        if lens.iter().all(|&l| l == lens[0]) {
            g.outputs[at][0] = Some(lens[0]);
        }
    }
    Ok(Some(g))
}

/// `Some(1)` (one view row per row) when `node` is an elementwise op (or copy) of static values
/// all broadcast along dim 0 to the `n` rows: its rows are all equal whatever their count, so it
/// is read as dynamic rows
/// (the gradient of a mean, `expand`ed and copied, is one). Reading such a value as anything else
/// only refuses the graph.
fn row_constant(node: &Node, inputs: &[Input<'_>], e: Extent) -> Option<usize> {
    let elementwise = matches!(
        &node.step,
        Step::Prim(Prim::Copy | Prim::Cast(_) | Prim::Binary(_) | Prim::Compare(_) | Prim::Where)
    ) || matches!(&node.step, Step::Prim(Prim::Unary(op)) if !matches!(op, UnaryOp::Softmax { .. }));
    if !elementwise || inputs.iter().any(|i| i.row_len.is_some()) {
        return None;
    }
    // Exactly `n` rows (and more than one): a broadcast of another size is some other constant,
    // which marking would only make a later graph of another row count refuse.
    let all = inputs
        .iter()
        .all(|i| i.layout.strides().first() == Some(&0) && i.layout.dims().first() == Some(&e.n));
    (e.n > 1 && all && node.outputs.iter().all(|o| o.1.is_multiple_of(e.n))).then_some(1)
}

/// The row count of the graph's dynamic leaves (they must agree), `None` without any.
fn graph_extent(order: &[Arc<Node>]) -> Result<Option<Extent>, String> {
    let mut extent: Option<Extent> = None;
    for node in order {
        for arg in node.args().iter() {
            let Arg::View { data, .. } = arg else { continue };
            if data.pending().is_some() {
                continue;
            }
            if let Some(e) = data.extent() {
                if extent.is_some_and(|x| x != e) {
                    let x = extent.expect("checked");
                    return Err(format!("it reads dynamic tensors of {} and {} rows", x.n, e.n));
                }
                extent = Some(e);
            }
        }
    }
    Ok(extent)
}

/// The generalized views of a node with dynamic inputs, and the elements per row of its
/// dynamic outputs.
type NodeViews = (Vec<View>, Vec<Option<usize>>);

fn generalize_node(node: &Node, inputs: &[Input<'_>], e: Extent) -> Result<NodeViews, String> {
    let name = step_name(&node.step);
    // Each dynamic input as whole rows.
    let mut rows: Vec<Option<(usize, usize, Layout)>> = Vec::with_capacity(inputs.len());
    for input in inputs {
        rows.push(match input.row_len {
            Some(c) => {
                Some(rows_view(input.layout, c, e).ok_or_else(|| {
                    format!("{name} reads a view of a dynamic tensor that is not whole rows")
                })?)
            }
            None => None,
        });
    }
    let ranks: Vec<usize> = inputs.iter().map(|i| i.layout.rank()).collect();
    let dynamic: Vec<&(usize, usize, Layout)> = rows.iter().flatten().collect();
    let (p, q) = (dynamic[0].0, dynamic[0].1);
    if dynamic.iter().any(|r| r.1 != q) {
        return Err(format!("{name} pairs rows of different sizes"));
    }
    if matches!(node.step, Step::CopyInto) && inputs[0].row_len.is_none() {
        return Err("copy_ writes a dynamic tensor into a static one".to_string());
    }
    // A `full` of the graph can be read as rows of the same size (refilled at the bucket).
    let refills: Vec<Option<(usize, usize, Layout)>> = inputs
        .iter()
        .map(|i| {
            let c = (i.full && i.len.is_multiple_of(e.n)).then(|| i.len / e.n)?;
            rows_view(i.layout, c, e).filter(|r| r.1 == q)
        })
        .collect();
    let as_rows = |i: usize| -> Option<View> {
        let (r, refill) = match (&rows[i], &refills[i]) {
            (Some(r), _) => (r, false),
            (None, Some(r)) => (r, true),
            (None, None) => return None,
        };
        let c = q * r.2.strides()[r.0];
        Some(View { layout: r.2.clone(), len: e.bucket * c, mask: None, refill })
    };
    // An op consuming the rows: masked inputs, static outputs (a softmax keeps its rows).
    let positions: Vec<Option<usize>> =
        rows.iter().zip(&refills).map(|(r, f)| r.as_ref().or(f.as_ref()).map(|r| r.0)).collect();
    if let Some(fills) = consumes_rows(&node.step, &positions, &ranks, inputs[0].dtype) {
        let mut views = Vec::with_capacity(inputs.len());
        for (i, &fill) in fills.iter().enumerate() {
            let view = as_rows(i)
                .ok_or_else(|| format!("{name} pairs a dynamic tensor with a static one across its rows"))?;
            let row_len = view.len / e.bucket;
            views.push(View { mask: Some(Mask { row_len, fill }), ..view });
        }
        let outputs = if matches!(node.step, Step::Prim(Prim::Unary(UnaryOp::Softmax { .. }))) {
            dynamic_outputs(node, inputs, &rows, e, name)?
        } else {
            vec![None; node.outputs.len()]
        };
        return Ok((views, outputs));
    }
    // An op keeping rows apart.
    let roles = keeps_rows(&node.step, p, &ranks)
        .ok_or_else(|| format!("{name} mixes the rows of a dynamic tensor"))?;
    let mut views = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.iter().enumerate() {
        let role = roles.get(i).copied();
        let view = match (&rows[i], role) {
            (Some(r), _) if r.0 != p => return Err(format!("{name} pairs rows along different dims")),
            (Some(_), Some(Role::Whole)) | (Some(_), None) => {
                return Err(format!("{name} reads a dynamic tensor across its rows"));
            }
            (Some(_), Some(Role::Rows)) => as_rows(i).expect("dynamic"),
            // A static row input: one row broadcast to all of them, or a `full` of the graph.
            (None, Some(Role::Rows)) => {
                let l = input.layout;
                let broadcast = l.strides().get(p) == Some(&0) && l.dims().get(p) == Some(&(e.n * q));
                match (broadcast, &refills[i]) {
                    (true, _) => View {
                        layout: with_rows(l, p, e.bucket * q).expect("same rank"),
                        len: input.len,
                        mask: None,
                        refill: false,
                    },
                    (false, Some(r)) if r.0 == p => as_rows(i).expect("refill"),
                    _ => {
                        return Err(format!(
                            "{name} pairs a dynamic tensor with a static one of {:?}",
                            l.dims()
                        ))
                    }
                }
            }
            (None, _) => View::recorded(input.layout, input.len),
        };
        views.push(view);
    }
    Ok((views, dynamic_outputs(node, inputs, &rows, e, name)?))
}

/// The elements per row of each output of a node keeping the rows of its dynamic inputs, whose
/// row dim must be outermost for the outputs' valid elements to be a prefix.
fn dynamic_outputs(
    node: &Node,
    inputs: &[Input<'_>],
    rows: &[Option<(usize, usize, Layout)>],
    e: Extent,
    name: &str,
) -> Result<Vec<Option<usize>>, String> {
    let outer = inputs
        .iter()
        .zip(rows)
        .all(|(i, r)| r.as_ref().is_none_or(|r| i.layout.dims()[..r.0].iter().all(|&d| d == 1)));
    if !outer {
        return Err(format!("{name} keeps rows that are not its outermost dim"));
    }
    node.outputs
        .iter()
        .map(|&(_, len)| {
            len.is_multiple_of(e.n)
                .then(|| Some(len / e.n))
                .ok_or_else(|| format!("{name} returns {len} elements, not whole rows"))
        })
        .collect()
}

/// The elements per row of a dynamic view source: a padded leaf, or a dynamic output of a node
/// earlier in the graph.
fn source_rows(
    data: &Data,
    len: usize,
    e: Extent,
    position: &HashMap<u64, usize>,
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
