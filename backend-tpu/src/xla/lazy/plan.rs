//! The plan of a fused graph: which computed buffers and host values become the program's
//! arguments, where each node's inputs come from, which nodes it returns, which arguments it may
//! write over (donation); the program's text; and the graph's signature, the key under which a
//! repeated graph finds its compiled program without emitting the text again.

use std::collections::HashMap;
use std::sync::Arc;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{DType, Device, Error, Layout, Result};

use super::generalize::{Generalized, Mask};
use super::node::{Arg, Data, Node, Step};
use crate::pjrt::{Buffer, ElementType, TensorType};
use crate::stablehlo::{FunctionBuilder, Value};
use crate::xla::cache::{runtime_offset, Input};
use crate::xla::grid_box::in_grid;
use crate::xla::materialize::index_type;
use crate::xla::program;

/// Where a node input's flat buffer comes from in the fused program.
#[derive(Clone, Copy)]
pub(super) enum Source {
    /// Program argument `k` (an already computed buffer).
    Arg(usize),
    /// Output `out` of the node at position `at` of the order.
    Node { at: usize, out: usize },
}

/// One input of one node in the fused program.
pub(super) struct Slot {
    source: Source,
    /// The program argument holding its runtime storage offset, when the view has one.
    offset_arg: Option<usize>,
}

/// The fused program's arguments and outputs.
pub(super) struct Plan {
    /// Computed buffers read by the graph (program arguments `0..leaves.len()`).
    pub(super) leaves: Vec<Arc<Buffer>>,
    /// Host values uploaded as 0-d arguments: scalars and view offsets, in argument order.
    pub(super) host_args: Vec<(CpuStorage, DType)>,
    arg_types: Vec<TensorType>,
    /// Per node: its view inputs' slots, and the argument of its scalar input, if any.
    slots: Vec<(Vec<Slot>, Option<usize>)>,
    /// Positions (in the order) of the nodes whose outputs the program returns.
    pub(super) outputs: Vec<usize>,
    /// Which leaves nothing outside the graph holds any more: their buffers are donated to the
    /// program (a parameter updated in place is written over, not doubled in memory).
    donatable: Vec<bool>,
    /// The graph rewritten for the bucket of its dynamic inputs, when it reads some.
    pub(super) generalized: Option<Generalized>,
    /// The argument holding the row count, when the generalized graph masks padding.
    rows_arg: Option<usize>,
}

impl Plan {
    /// The layout and storage length the program uses for view `j` of node `i`: the recorded
    /// ones, or their bucket-sized versions in a generalized graph.
    fn view<'a>(&'a self, i: usize, j: usize, layout: &'a Layout, len: usize) -> (&'a Layout, usize) {
        view_in(self.generalized.as_ref(), i, j, layout, len)
    }

    /// The mask on view `j` of node `i` (a generalized graph's op consuming rows).
    fn mask(&self, i: usize, j: usize) -> Option<Mask> {
        self.generalized.as_ref().and_then(|g| g.views[i][j].mask)
    }

    /// Whether view `j` of node `i` reads a `full` of the graph refilled at its bucket size.
    fn refill(&self, i: usize, j: usize) -> bool {
        self.generalized.as_ref().is_some_and(|g| g.views[i][j].refill)
    }

    /// The flat length of output `o` of node `i` in the program.
    fn output_len(&self, i: usize, o: usize, len: usize) -> usize {
        self.generalized.as_ref().and_then(|g| g.outputs[i][o]).unwrap_or(len)
    }
}

fn view_in<'a>(
    generalized: Option<&'a Generalized>,
    i: usize,
    j: usize,
    layout: &'a Layout,
    len: usize,
) -> (&'a Layout, usize) {
    match generalized {
        Some(g) => (&g.views[i][j].layout, g.views[i][j].len),
        None => (layout, len),
    }
}

impl Plan {
    pub(super) fn new(order: &[Arc<Node>], generalized: Option<Generalized>) -> Result<Plan> {
        let position: HashMap<u64, usize> = order.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let mut leaves: Vec<Arc<Buffer>> = Vec::new();
        let mut leaf_index: HashMap<*const Buffer, usize> = HashMap::new();
        let mut leaf_types: Vec<TensorType> = Vec::new();
        let mut host: Vec<(CpuStorage, DType, TensorType)> = Vec::new();
        let mut internal_uses = vec![0usize; order.len()];
        // Holders of each leaf buffer inside the graph: `Ready` references, and computed nodes
        // (whose result holds the buffer) with the number of references to each node.
        let mut ready_refs: HashMap<*const Buffer, usize> = HashMap::new();
        let mut node_refs: HashMap<*const Node, (Arc<Node>, usize)> = HashMap::new();
        let mut holders: HashMap<*const Buffer, Vec<*const Node>> = HashMap::new();
        let mut slots = Vec::with_capacity(order.len());
        for (i, node) in order.iter().enumerate() {
            let mut views = Vec::new();
            let mut scalar = None;
            for arg in node.args().iter() {
                match arg {
                    Arg::View { data, dtype, len, layout } => {
                        let (layout, len) = view_in(generalized.as_ref(), i, views.len(), layout, *len);
                        let source = match data.pending().and_then(|n| position.get(&n.id)) {
                            Some(&at) => {
                                internal_uses[at] += 1;
                                let Data::Pending(_, out) = data else { unreachable!("pending data") };
                                Source::Node { at, out: *out }
                            }
                            None => {
                                let buffer = data.ready().ok_or_else(|| {
                                    Error::msg("xla: a pending input was not computed before its user")
                                })?;
                                match data {
                                    Data::Ready(..) => {
                                        *ready_refs.entry(Arc::as_ptr(buffer)).or_default() += 1
                                    }
                                    Data::Pending(n, _) => {
                                        let entry =
                                            node_refs.entry(Arc::as_ptr(n)).or_insert_with(|| (n.clone(), 0));
                                        entry.1 += 1;
                                        let list = holders.entry(Arc::as_ptr(buffer)).or_default();
                                        if !list.contains(&Arc::as_ptr(n)) {
                                            list.push(Arc::as_ptr(n));
                                        }
                                    }
                                }
                                let k = *leaf_index.entry(Arc::as_ptr(buffer)).or_insert_with(|| {
                                    leaves.push(buffer.clone());
                                    // A padded (dynamic) buffer's own length: the program
                                    // cuts the prefix it reads unless it is generalized.
                                    let numel = buffer.dims().iter().product::<i64>();
                                    leaf_types.push(TensorType::new(ElementType::from(*dtype), &[numel]));
                                    leaves.len() - 1
                                });
                                Source::Arg(k)
                            }
                        };
                        let offset_arg = runtime_offset(layout, len).then(|| {
                            let (value, ty) = offset_host_value(layout.offset(), len);
                            host.push((value, ty.1, ty.0));
                            host.len() - 1
                        });
                        views.push(Slot { source, offset_arg });
                    }
                    Arg::Scalar(value, dtype) => {
                        host.push((
                            CpuStorage::full(*dtype, 1, *value),
                            *dtype,
                            TensorType::new(ElementType::from(*dtype), &[]),
                        ));
                        scalar = Some(host.len() - 1);
                    }
                }
            }
            slots.push((views, scalar));
        }
        // Host arguments come after the leaves.
        // The row count of a generalized graph that masks padding: an `i64` argument.
        let rows_arg = generalized.as_ref().filter(|g| g.masked).map(|g| {
            let n = CpuStorage::from_vec(vec![g.extent.n as i64]);
            host.push((n, DType::I64, TensorType::new(ElementType::S64, &[])));
            leaves.len() + host.len() - 1
        });
        let base = leaves.len();
        for (views, scalar) in &mut slots {
            for slot in views.iter_mut() {
                if let Some(k) = slot.offset_arg.as_mut() {
                    *k += base;
                }
            }
            if let Some(k) = scalar.as_mut() {
                *k += base;
            }
        }
        // A node is returned when anything outside the graph holds it: its strong count
        // beyond the graph's own references (the order's clone and its internal uses).
        let outputs = order
            .iter()
            .enumerate()
            .filter(|(i, n)| Arc::strong_count(n) > 1 + internal_uses[*i])
            .map(|(i, _)| i)
            .collect();
        // A leaf is donatable when its holders are exactly the graph's own references: the
        // plan's, the `Ready` arguments', and computed nodes only the graph's arguments hold
        // (each such node's result holds the buffer once; `node_refs` holds one more clone).
        let donatable = leaves
            .iter()
            .map(|b| {
                let p = Arc::as_ptr(b);
                let via_nodes = holders.get(&p).map_or(&[][..], Vec::as_slice);
                let nodes_internal = via_nodes.iter().all(|n| {
                    node_refs.get(n).is_some_and(|(node, uses)| Arc::strong_count(node) == uses + 1)
                });
                let expected = 1 + ready_refs.get(&p).copied().unwrap_or(0) + via_nodes.len();
                nodes_internal && Arc::strong_count(b) == expected
            })
            .collect();
        drop(node_refs);
        let mut arg_types = leaf_types;
        arg_types.extend(host.iter().map(|h| h.2.clone()));
        let host_args = host.into_iter().map(|(s, d, _)| (s, d)).collect();
        Ok(Plan { leaves, host_args, arg_types, slots, outputs, donatable, generalized, rows_arg })
    }

    /// The fused program's text, and how many leaves it takes as donated buffers.
    pub(super) fn program_text(&self, order: &[Arc<Node>]) -> crate::pjrt::Result<(String, usize)> {
        let (mut b, args) = FunctionBuilder::new(&self.arg_types);
        b.set_host_kernels(crate::xla::host_kernels::enabled(order[0].device));
        let mut values: Vec<Vec<Value>> = Vec::with_capacity(order.len());
        let flat_nodes = self.flat_nodes(order);
        for (i, (node, (views, scalar))) in order.iter().zip(&self.slots).enumerate() {
            let node_args = node.args();
            let layouts = self.layouts(i, &node_args);
            let inputs: Vec<Input<'_>> =
                layouts.iter().map(|&(layout, dtype, len)| Input { dtype, len, layout }).collect();
            let mut flat: Vec<Value> = Vec::with_capacity(views.len());
            for (j, (s, &(_, _, len))) in views.iter().zip(&layouts).enumerate() {
                let value = match s.source {
                    // A padded buffer read with its exact shapes: its first `len` elements.
                    Source::Arg(k) if self.arg_types[k].dims != [len as i64] => {
                        crate::xla::materialize::slice_1d(&mut b, &args[k], 0, len)
                    }
                    Source::Arg(k) => args[k].clone(),
                    // A `full` read as rows: its value at the bucket's size.
                    Source::Node { at, .. } if self.refill(i, j) => {
                        let value = &args[self.slots[at].1.expect("full has a scalar")];
                        program::emit_full(&mut b, value, len)
                    }
                    Source::Node { at, out } => {
                        let value = &values[at][out];
                        if value.ty().dims[0] as usize > len {
                            // A `full` computed at its bucket's size, read as recorded.
                            crate::xla::materialize::slice_1d(&mut b, value, 0, len)
                        } else {
                            value.clone()
                        }
                    }
                };
                flat.push(match (self.mask(i, j), self.rows_arg) {
                    (Some(mask), Some(n)) => masked(&mut b, &value, mask, &args[n]),
                    _ => value,
                });
            }
            let starts: Vec<Option<&Value>> = views.iter().map(|s| s.offset_arg.map(|k| &args[k])).collect();
            let outs = match &node.step {
                Step::Prim(prim) => program::emit_prim(&mut b, prim, &inputs, &flat, &starts, flat_nodes[i])?,
                Step::CopyInto => {
                    vec![program::emit_copy(
                        &mut b,
                        inputs[0],
                        inputs[1],
                        [&flat[0], &flat[1]],
                        [starts[0], starts[1]],
                    )?]
                }
                Step::FillInto => {
                    let value = &args[scalar.expect("fill_ has a scalar")];
                    vec![program::emit_fill(&mut b, inputs[0], &flat[0], value, starts[0])]
                }
                Step::Full { numel } => {
                    let numel = self.output_len(i, 0, *numel);
                    vec![program::emit_full(&mut b, &args[scalar.expect("full has a scalar")], numel)]
                }
            };
            values.push(outs);
        }
        let results: Vec<&Value> = self.outputs.iter().flat_map(|&i| values[i].iter()).collect();
        let aliases = if donation_enabled() { self.aliases(order, &results) } else { Vec::new() };
        let donated = aliases.len();
        Ok((b.finish_aliased(&results, &aliases), donated))
    }

    /// Node `i`'s view inputs as the program reads them: layout, dtype and storage length.
    fn layouts<'a>(&'a self, i: usize, node_args: &'a [Arg]) -> Vec<(&'a Layout, DType, usize)> {
        node_args
            .iter()
            .filter_map(|a| match a {
                Arg::View { layout, dtype, len, .. } => Some((layout, *dtype, *len)),
                Arg::Scalar(..) => None,
            })
            .enumerate()
            .map(|(j, (layout, dtype, len))| {
                let (layout, len) = self.view(i, j, layout, len);
                (layout, dtype, len)
            })
            .collect()
    }

    /// Which nodes run on flat blocks, with no reshape around them (see `program::runs_flat`):
    /// elementwise chains from program arguments (an optimizer's state updated in place), and the
    /// elementwise ops whose every reader is such a node (the `g·g` term of Adam's second moment,
    /// read by the flat state update). Reshapes between the two made XLA recompute the state's
    /// update inside the parameter's and copy the donated state for it. An op read by a matmul
    /// stays shaped: a flat op next to a matmul lets XLA build an output fusion that wants the
    /// weight transposed.
    fn flat_nodes(&self, order: &[Arc<Node>]) -> Vec<bool> {
        // Which prims may run flat at all (elementwise, on dense blocks of one shape or scalars).
        let eligible: Vec<bool> = order
            .iter()
            .enumerate()
            .map(|(i, node)| match &node.step {
                Step::Prim(prim) => {
                    let node_args = node.args();
                    let layouts = self.layouts(i, &node_args);
                    let inputs: Vec<Input<'_>> =
                        layouts.iter().map(|&(layout, dtype, len)| Input { dtype, len, layout }).collect();
                    program::runs_flat(prim, &inputs)
                }
                _ => false,
            })
            .collect();
        // Forward: chains from program arguments (other steps pass their arguments' flatness on).
        let mut flat = Vec::with_capacity(order.len());
        for (i, node) in order.iter().enumerate() {
            let from_args = self.slots[i].0.iter().any(|s| match s.source {
                Source::Arg(_) => true,
                Source::Node { at, .. } => flat[at],
            });
            flat.push(from_args && (eligible[i] || !matches!(node.step, Step::Prim(_))));
        }
        // Backward: elementwise ops read only by flat ones.
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
        for (i, (views, _)) in self.slots.iter().enumerate() {
            for s in views {
                if let Source::Node { at, .. } = s.source {
                    readers[at].push(i);
                }
            }
        }
        for i in (0..order.len()).rev() {
            if !flat[i] && eligible[i] && !readers[i].is_empty() {
                flat[i] = readers[i].iter().all(|&r| flat[r] && matches!(order[r].step, Step::Prim(_)));
            }
        }
        flat
    }
}

impl Plan {
    /// (argument, result) pairs: each donatable leaf is written over by a result of its type.
    /// First the result that is the leaf's own new version (the end of a chain of in-place
    /// writes starting at the leaf: a parameter or optimizer state updated in place), so XLA
    /// writes it in place without copying; then any other unclaimed result of the same type.
    fn aliases(&self, order: &[Arc<Node>], results: &[&Value]) -> Vec<(usize, usize)> {
        // The first result index of each output node.
        let mut first = Vec::with_capacity(self.outputs.len());
        let mut j = 0;
        for &i in &self.outputs {
            first.push(j);
            j += order[i].outputs.len();
        }
        let mut taken = vec![false; results.len()];
        let mut donated = vec![false; self.donatable.len()];
        let mut aliases = Vec::new();
        for (o, &i) in self.outputs.iter().enumerate() {
            let mut at = i;
            let leaf = loop {
                if !matches!(order[at].step, Step::CopyInto | Step::FillInto) {
                    break None;
                }
                match self.slots[at].0.first().map(|s| s.source) {
                    Some(Source::Arg(k)) => break Some(k),
                    Some(Source::Node { at: prev, .. }) => at = prev,
                    None => break None,
                }
            };
            if let Some(k) = leaf {
                let j = first[o];
                if self.donatable[k] && !donated[k] && *results[j].ty() == self.arg_types[k] {
                    donated[k] = true;
                    taken[j] = true;
                    aliases.push((k, j));
                }
            }
        }
        for k in (0..self.donatable.len()).filter(|&k| self.donatable[k] && !donated[k]) {
            if let Some(j) = (0..results.len()).find(|&j| !taken[j] && *results[j].ty() == self.arg_types[k])
            {
                taken[j] = true;
                aliases.push((k, j));
            }
        }
        aliases
    }
}

/// `flat` with every element past the first `n · row_len` replaced by `mask.fill` (`n`: the 0-d
/// `i64` row count); a `select`, so NaN or inf in the padding never leaks.
fn masked(b: &mut FunctionBuilder, flat: &Value, mask: Mask, n: &Value) -> Value {
    use crate::xla::materialize::{index_type, int_const, iota};
    let len = flat.ty().dims[0] as usize;
    let et = index_type(len);
    let scalar = TensorType::new(et, &[]);
    let n =
        if et == ElementType::S64 { n.clone() } else { b.op("stablehlo.convert", &[n], "", scalar.clone()) };
    let row_len = int_const(b, &scalar, mask.row_len);
    let limit = b.op("stablehlo.multiply", &[&n, &row_len], "", scalar);
    let limit = b.op(
        "stablehlo.broadcast_in_dim",
        &[&limit],
        "broadcast_dimensions = array<i64>",
        TensorType::new(et, &[len as i64]),
    );
    let index = iota(b, et, &[len], 0);
    let valid = b.compare("LT", &index, &limit);
    let fill = b.splat(flat.ty(), mask.fill);
    b.select(&valid, flat, &fill)
}

/// Whether buffers may be donated (`OXTORCH_XLA_DONATE=0` turns it off).
fn donation_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("OXTORCH_XLA_DONATE").map_or(true, |v| v != "0"))
}

/// A storage offset as a 0-d value of the index type of a buffer of `len` elements.
fn offset_host_value(offset: usize, len: usize) -> (CpuStorage, (TensorType, DType)) {
    if index_type(len) == ElementType::S32 {
        let v = CpuStorage::from_vec(vec![offset as i32]);
        (v, (TensorType::new(ElementType::S32, &[]), DType::I32))
    } else {
        let v = CpuStorage::from_vec(vec![offset as i64]);
        (v, (TensorType::new(ElementType::S64, &[]), DType::I64))
    }
}

impl Plan {
    /// The graph's signature: everything its program text depends on, as bytes. That is, per node,
    /// the step with its parameters, its outputs' dtypes and sizes, and per input the dtype, the
    /// storage length, the sizes and strides, where the buffer comes from and whether its offset is
    /// a runtime argument and whether the view is a box of its buffer's grid; then the argument types, the returned nodes, the donatable arguments.
    /// Equal signatures give equal program texts, so the signature keys the compiled program, and a
    /// repeated graph (a decode step, a training step) runs without emitting its text again, which
    /// costs several times more. Storage offsets and scalars are runtime arguments, not part of it:
    /// a decode step writing its cache one position further has the same signature.
    pub(super) fn signature(&self, order: &[Arc<Node>], device: Device) -> Vec<u8> {
        let mut sig = Signature(Vec::with_capacity(64 * order.len() + 4 * self.arg_types.len()));
        sig.debug(&device);
        sig.flag(donation_enabled());
        sig.number(order.len());
        sig.flag(self.generalized.is_some());
        for (i, (node, (views, scalar))) in order.iter().zip(&self.slots).enumerate() {
            match &node.step {
                Step::Prim(prim) => {
                    sig.number(0);
                    sig.debug(prim);
                }
                Step::CopyInto => sig.number(1),
                Step::FillInto => sig.number(2),
                Step::Full { numel } => {
                    sig.number(3);
                    sig.number(self.output_len(i, 0, *numel));
                }
            }
            sig.number(node.outputs.len());
            for (o, &(dtype, len)) in node.outputs.iter().enumerate() {
                sig.number(dtype as usize);
                sig.number(self.output_len(i, o, len));
            }
            let args = node.args();
            sig.number(args.len());
            let mut slots = views.iter().enumerate();
            for arg in args.iter() {
                match arg {
                    Arg::View { dtype, len, layout, .. } => {
                        let (j, slot) = slots.next().expect("a slot per view input");
                        let (layout, len) = self.view(i, j, layout, *len);
                        let len = &len;
                        match self.mask(i, j) {
                            Some(m) => {
                                sig.flag(true);
                                sig.number(m.row_len);
                                sig.number(m.fill.to_bits() as usize);
                            }
                            None => sig.flag(false),
                        }
                        sig.flag(self.refill(i, j));
                        sig.number(*dtype as usize);
                        sig.number(*len);
                        sig.list(layout.dims());
                        sig.list(layout.strides());
                        sig.flag(in_grid(layout, *len));
                        match slot.source {
                            Source::Arg(k) => {
                                sig.number(0);
                                sig.number(k);
                            }
                            Source::Node { at, out } => {
                                sig.number(1);
                                sig.number(at);
                                sig.number(out);
                            }
                        }
                        sig.option(slot.offset_arg);
                    }
                    Arg::Scalar(_, dtype) => {
                        sig.number(usize::MAX);
                        sig.number(*dtype as usize);
                    }
                }
            }
            sig.option(*scalar);
        }
        sig.number(self.arg_types.len());
        for ty in &self.arg_types {
            sig.number(ty.element_type as usize);
            sig.number(ty.dims.len());
            for &d in &ty.dims {
                sig.number(d as usize);
            }
        }
        sig.list(&self.outputs);
        for &d in &self.donatable {
            sig.flag(d);
        }
        sig.0
    }
}

/// A self-delimiting byte encoding: numbers as LEB128 varints, lists with their length first,
/// `Debug` text ended by `0xFF` (a byte UTF-8 never contains).
struct Signature(Vec<u8>);

impl Signature {
    fn number(&mut self, mut v: usize) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn flag(&mut self, b: bool) {
        self.0.push(b as u8);
    }

    fn option(&mut self, v: Option<usize>) {
        match v {
            Some(v) => {
                self.flag(true);
                self.number(v);
            }
            None => self.flag(false),
        }
    }

    fn list(&mut self, values: &[usize]) {
        self.number(values.len());
        for &v in values {
            self.number(v);
        }
    }

    fn debug(&mut self, value: &impl std::fmt::Debug) {
        use std::fmt::Write;
        write!(self, "{value:?}").expect("writing to a Vec cannot fail");
        self.0.push(0xFF);
    }
}

impl std::fmt::Write for Signature {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
