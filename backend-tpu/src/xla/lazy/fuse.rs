//! Computing pending nodes: the not-yet-computed graph behind the requested nodes becomes one
//! StableHLO program (each node emitted exactly as its eager program would be), compiled once
//! per distinct program text and cached, and launched once. The outputs are the requested nodes
//! and every other node something outside the graph still holds (a live tensor, or a pending
//! node recorded later); values only the graph itself uses stay inside the program, where XLA
//! fuses them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{DType, Device, Error, Layout, Result};

use super::mode::{with_mode, Mode};
use super::node::{Arg, Data, Node, Step};
use crate::pjrt::{Buffer, ElementType, TensorType};
use crate::stablehlo::{FunctionBuilder, Value};
use crate::xla::cache::{runtime_offset, Input, Program};
use crate::xla::materialize::index_type;
use crate::xla::storage::XlaStorage;
use crate::xla::{execute, metrics, pjrt_err, program, registry, transfer, write};

/// One computation at a time: two threads never compute the same node twice.
static FUSING: Mutex<()> = Mutex::new(());

/// Fused programs by their text (the text is the graph's fingerprint: same ops, same views,
/// same dtypes and sizes, same outputs).
static PROGRAMS: Mutex<Option<FusedPrograms>> = Mutex::new(None);

/// `None`: the plugin refused the program; its graphs run node by node without compiling again.
type FusedPrograms = HashMap<(Device, String), Option<Arc<Program>>>;

/// Computes every pending node still referenced (`torch_xla`'s `mark_step`).
pub(crate) fn sync_all(why: &str) -> Result<()> {
    sync_recorded_by(None, why)
}

/// Computes the pending nodes this thread recorded, and what they read: the end of a training
/// step. Nodes other threads recorded meanwhile (a data loader's next batch) stay pending unless
/// the step reads them, so a step's program never depends on another thread's timing.
pub(crate) fn sync_this_thread(why: &str) -> Result<()> {
    sync_recorded_by(Some(super::node::current_thread()), why)
}

fn sync_recorded_by(thread: Option<u64>, why: &str) -> Result<()> {
    // Under the lock: a node another thread is computing right now is not taken half-done.
    let _lock = FUSING.lock().unwrap_or_else(|e| e.into_inner());
    let live = super::node::take_live(thread);
    let mut by_device: HashMap<Device, Vec<Arc<Node>>> = HashMap::new();
    for node in live {
        by_device.entry(node.device).or_default().push(node);
    }
    for (_, roots) in by_device {
        // Weak: the graph's outputs are what something else holds, not these references.
        let taken: Vec<std::sync::Weak<Node>> = roots.iter().map(Arc::downgrade).collect();
        if let Err(e) = materialize_locked(roots, why) {
            // Whatever did not run stays registered, so a later sync still finds it.
            super::node::relive(taken);
            return Err(e);
        }
    }
    Ok(())
}

/// Whether `OXTORCH_LOG_SYNCS` asks for a line per fused run.
fn log_syncs() -> bool {
    static LOG: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOG.get_or_init(|| std::env::var("OXTORCH_LOG_SYNCS").is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// Computes `roots` (all on one device) and the pending graph behind them; `why` names the sync
/// point in `OXTORCH_LOG_SYNCS` lines.
pub(crate) fn materialize(roots: Vec<Arc<Node>>, why: &str) -> Result<()> {
    let _lock = FUSING.lock().unwrap_or_else(|e| e.into_inner());
    materialize_locked(roots, why)
}

/// [`materialize`] with `FUSING` held by the caller.
fn materialize_locked(roots: Vec<Arc<Node>>, why: &str) -> Result<()> {
    super::repeat::segment_ended();
    let order = collect(roots);
    if order.is_empty() {
        return Ok(());
    }
    if log_syncs() {
        eprintln!(
            "[oxtorch xla] running {} pending ops ({why})\n    at {}",
            order.len(),
            if std::env::var("OXTORCH_LOG_SYNCS").as_deref() == Ok("full") {
                std::backtrace::Backtrace::force_capture().to_string()
            } else {
                crate::compiler::caller_location()
            }
        );
    }
    let plan = Plan::new(&order)?;
    match plan.program_text(&order) {
        Ok((text, donated)) => run_fused(&order, &plan, text, donated),
        // A node without a fused lowering (a cast the plugin lacks): run node by node.
        Err(crate::pjrt::Error::Unsupported(_)) => run_one_by_one(&order),
        Err(e) => Err(pjrt_err(e)),
    }
}

/// The uncomputed nodes reachable from `roots`, oldest first (inputs before their users).
/// Takes the roots by value so that the caller's references do not count as outside users.
fn collect(roots: Vec<Arc<Node>>) -> Vec<Arc<Node>> {
    let mut seen = std::collections::HashSet::new();
    let mut order = Vec::new();
    let mut stack: Vec<Arc<Node>> =
        roots.into_iter().filter(|n| n.result.get().is_none() && !n.has_run()).collect();
    while let Some(node) = stack.pop() {
        if !seen.insert(node.id) {
            continue;
        }
        for arg in node.args().iter() {
            if let Arg::View { data, .. } = arg {
                if let Some(input) = data.pending() {
                    if !seen.contains(&input.id) {
                        stack.push(input.clone());
                    }
                }
            }
        }
        order.push(node);
    }
    order.sort_by_key(|n| n.id);
    order
}

/// Where a node input's flat buffer comes from in the fused program.
#[derive(Clone, Copy)]
enum Source {
    /// Program argument `k` (an already computed buffer).
    Arg(usize),
    /// Output `out` of the node at position `at` of the order.
    Node { at: usize, out: usize },
}

/// One input of one node in the fused program.
struct Slot {
    source: Source,
    /// The program argument holding its runtime storage offset, when the view has one.
    offset_arg: Option<usize>,
}

/// The fused program's arguments and outputs.
struct Plan {
    /// Computed buffers read by the graph (program arguments `0..leaves.len()`).
    leaves: Vec<Arc<Buffer>>,
    /// Host values uploaded as 0-d arguments: scalars and view offsets, in argument order.
    host_args: Vec<(CpuStorage, DType)>,
    arg_types: Vec<TensorType>,
    /// Per node: its view inputs' slots, and the argument of its scalar input, if any.
    slots: Vec<(Vec<Slot>, Option<usize>)>,
    /// Positions (in the order) of the nodes whose outputs the program returns.
    outputs: Vec<usize>,
    /// Which leaves nothing outside the graph holds any more: their buffers are donated to the
    /// program (a parameter updated in place is written over, not doubled in memory).
    donatable: Vec<bool>,
}

impl Plan {
    fn new(order: &[Arc<Node>]) -> Result<Plan> {
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
        for node in order {
            let mut views = Vec::new();
            let mut scalar = None;
            for arg in node.args().iter() {
                match arg {
                    Arg::View { data, dtype, len, layout } => {
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
                                    Data::Ready(_) => {
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
                                    leaf_types
                                        .push(TensorType::new(ElementType::from(*dtype), &[*len as i64]));
                                    leaves.len() - 1
                                });
                                Source::Arg(k)
                            }
                        };
                        let offset_arg = runtime_offset(layout, *len).then(|| {
                            let (value, ty) = offset_host_value(layout.offset(), *len);
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
        Ok(Plan { leaves, host_args, arg_types, slots, outputs, donatable })
    }

    /// The fused program's text, and how many leaves it takes as donated buffers.
    fn program_text(&self, order: &[Arc<Node>]) -> crate::pjrt::Result<(String, usize)> {
        let (mut b, args) = FunctionBuilder::new(&self.arg_types);
        let mut values: Vec<Vec<Value>> = Vec::with_capacity(order.len());
        // Which nodes are elementwise chains from program arguments (see `program::runs_flat`).
        let mut flat_chain: Vec<bool> = Vec::with_capacity(order.len());
        for (node, (views, scalar)) in order.iter().zip(&self.slots) {
            let node_args = node.args();
            let layouts: Vec<(&Layout, DType, usize)> = node_args
                .iter()
                .filter_map(|a| match a {
                    Arg::View { layout, dtype, len, .. } => Some((layout, *dtype, *len)),
                    Arg::Scalar(..) => None,
                })
                .collect();
            let inputs: Vec<Input<'_>> =
                layouts.iter().map(|&(layout, dtype, len)| Input { dtype, len, layout }).collect();
            let flat: Vec<Value> = views
                .iter()
                .map(|s| match s.source {
                    Source::Arg(k) => args[k].clone(),
                    Source::Node { at, out } => values[at][out].clone(),
                })
                .collect();
            let starts: Vec<Option<&Value>> = views.iter().map(|s| s.offset_arg.map(|k| &args[k])).collect();
            let from_args = views.iter().any(|s| match s.source {
                Source::Arg(_) => true,
                Source::Node { at, .. } => flat_chain[at],
            });
            flat_chain.push(match &node.step {
                Step::Prim(prim) => from_args && program::runs_flat(prim, &inputs),
                _ => from_args,
            });
            let outs = match &node.step {
                Step::Prim(prim) => program::emit_prim(&mut b, prim, &inputs, &flat, &starts, from_args)?,
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
                    vec![program::emit_full(&mut b, &args[scalar.expect("full has a scalar")], *numel)]
                }
            };
            values.push(outs);
        }
        let results: Vec<&Value> = self.outputs.iter().flat_map(|&i| values[i].iter()).collect();
        let aliases = if donation_enabled() { self.aliases(order, &results) } else { Vec::new() };
        let donated = aliases.len();
        Ok((b.finish_aliased(&results, &aliases), donated))
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

/// One line per node (op, input shapes): what `OXTORCH_LOG_COMPILES` compares between the
/// previous fused compile and this one.
fn describe(order: &[Arc<Node>]) -> Vec<String> {
    order
        .iter()
        .map(|n| {
            let op = match &n.step {
                Step::Prim(p) => format!("{p:?}"),
                Step::CopyInto => "copy_".to_string(),
                Step::FillInto => "fill_".to_string(),
                Step::Full { numel } => format!("full({numel})"),
            };
            let shapes: Vec<String> = n
                .args()
                .iter()
                .filter_map(|a| match a {
                    Arg::View { dtype, layout, .. } => Some(format!("{dtype}{:?}", layout.dims())),
                    Arg::Scalar(..) => None,
                })
                .collect();
            format!("{op} on ({})", shapes.join(", "))
        })
        .collect()
}

/// Why a fused graph compiles: the first op where it differs from the previously compiled one
/// (the Rust code took another path, a shape or dtype changed, or the graph was cut elsewhere).
fn explain(order: &[Arc<Node>]) -> String {
    static LAST: Mutex<Option<Vec<String>>> = Mutex::new(None);
    let now = describe(order);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    let reason = match last.as_ref() {
        None => "first fused graph".to_string(),
        Some(prev) => match prev.iter().zip(&now).position(|(a, b)| a != b) {
            Some(i) => {
                format!("op {i} differs from the previous fused graph's: was {}, now {}", prev[i], now[i])
            }
            None if prev.len() != now.len() => {
                format!("the previous fused graph had {} ops, this one {}", prev.len(), now.len())
            }
            None => "same ops as the previous fused graph, other outputs or views".to_string(),
        },
    };
    *last = Some(now);
    reason
}

/// The compiled fused program for `text` (compiling it on a miss).
/// `None` when the plugin refuses it (reported once per program).
fn fused_program(text: String, order: &[Arc<Node>], out_dtypes: Vec<DType>) -> Option<Arc<Program>> {
    let device = order[0].device;
    let key = (device, text);
    if let Some(p) = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&key)) {
        metrics::record_cache_hit();
        return p.clone();
    }
    let what = format!("fused graph of {} ops", order.len());
    let program = match execute::compile_explained(&key.1, device, out_dtypes, &what, || explain(order)) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("oxtorch: the fused xla program did not compile; running its ops one by one: {e}");
            None
        }
    };
    PROGRAMS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, program.clone());
    program
}

fn run_fused(order: &[Arc<Node>], plan: &Plan, text: String, donated: usize) -> Result<()> {
    let device = order[0].device;
    let out_dtypes: Vec<DType> =
        plan.outputs.iter().flat_map(|&i| order[i].outputs.iter().map(|o| o.0)).collect();
    let Some(program) = fused_program(text, order, out_dtypes) else {
        return run_one_by_one(order);
    };
    let (client, pjrt_device) = registry::device(device)?;
    let uploaded: Vec<Buffer> = plan
        .host_args
        .iter()
        .map(|(s, dtype)| transfer::upload(client, pjrt_device, s.as_bytes(), *dtype, &[]))
        .collect::<Result<_>>()?;
    let mut args: Vec<&Buffer> = plan.leaves.iter().map(|b| &**b).collect();
    args.extend(uploaded.iter());
    let start = Instant::now();
    let (outputs, _done) = program.exe.execute_async(&args).map_err(pjrt_err)?;
    metrics::record_execute(start.elapsed());
    metrics::record_fused(order.len(), donated);
    let mut outputs = outputs.into_iter().map(Arc::new);
    for &i in &plan.outputs {
        let node = &order[i];
        let buffers: Vec<Arc<Buffer>> = outputs.by_ref().take(node.outputs.len()).collect();
        if buffers.len() != node.outputs.len() {
            return Err(Error::msg("xla: the fused program returned fewer outputs than planned"));
        }
        node.complete(buffers);
    }
    // Nodes nobody outside holds were computed inside the program; free their inputs.
    for node in order {
        node.args().clear();
        node.ran();
    }
    Ok(())
}

/// A computed view input as a storage the eager runtime can take.
fn eager_input(data: &Data, dtype: DType, len: usize, device: Device) -> Result<XlaStorage> {
    let buffer =
        data.ready().ok_or_else(|| Error::msg("xla: a pending input was not computed before its user"))?;
    Ok(XlaStorage::ready(buffer.clone(), dtype, len, device))
}

/// Computes the nodes in order with the eager runtime (each op its own program, or the host).
fn run_one_by_one(order: &[Arc<Node>]) -> Result<()> {
    with_mode(Mode::Eager, || {
        for node in order {
            let device = node.device;
            let outputs: Vec<XlaStorage> = {
                let args = node.args();
                let mut views = Vec::new();
                let mut scalar = None;
                for a in args.iter() {
                    match a {
                        Arg::View { data, dtype, len, layout } => {
                            views.push((eager_input(data, *dtype, *len, device)?, layout));
                        }
                        Arg::Scalar(v, d) => scalar = Some((*v, *d)),
                    }
                }
                match &node.step {
                    Step::Prim(prim) => {
                        let refs: Vec<(&XlaStorage, &Layout)> = views.iter().map(|(s, l)| (s, *l)).collect();
                        execute::execute(prim, &refs)?
                    }
                    Step::CopyInto => {
                        let (src, src_layout) = views.pop().expect("copy_ has a source");
                        let (mut dst, dst_layout) = views.pop().expect("copy_ has a destination");
                        write::copy_into(&mut dst, dst_layout, &src, src_layout)?;
                        vec![dst]
                    }
                    Step::FillInto => {
                        let (mut dst, layout) = views.pop().expect("fill_ has a destination");
                        let (value, _) = scalar.expect("fill_ has a value");
                        write::fill(&mut dst, layout, value)?;
                        vec![dst]
                    }
                    Step::Full { numel } => {
                        let (value, dtype) = scalar.expect("full has a value");
                        vec![execute::full(&[*numel], value, dtype, device)?]
                    }
                }
            };
            let buffers = outputs
                .iter()
                .map(|s| {
                    s.data
                        .ready()
                        .cloned()
                        .ok_or_else(|| Error::msg("xla: an eager op returned pending data"))
                })
                .collect::<Result<Vec<_>>>()?;
            node.complete(buffers);
            node.ran();
        }
        Ok(())
    })
}
