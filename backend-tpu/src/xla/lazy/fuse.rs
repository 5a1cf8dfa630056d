//! Computing pending nodes: the not-yet-computed graph behind the requested nodes becomes one
//! StableHLO program (each node emitted exactly as its eager program would be), compiled once
//! per distinct program text and cached, and launched once. The outputs are the requested nodes
//! and every other node something outside the graph still holds (a live tensor, or a pending
//! node recorded later); values only the graph itself uses stay inside the program, where XLA
//! fuses them. A graph seen before is recognised by its signature (see [`Plan::signature`]) and
//! runs its program without the text being emitted again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use oxtorch_core::{DType, Device, Error, Layout, Result};

use super::mode::{with_mode, Mode};
use super::node::{Arg, Data, Node, Step};
use super::plan::Plan;
use crate::pjrt::{Buffer, Event};
use crate::xla::cache::Program;
use crate::xla::storage::XlaStorage;
use crate::xla::{execute, metrics, pjrt_err, registry, scalar_args, write};

/// One computation at a time: two threads never compute the same node twice.
static FUSING: Mutex<()> = Mutex::new(());

/// Fused programs by their text (the text is the graph's fingerprint: same ops, same views,
/// same dtypes and sizes, same outputs).
static PROGRAMS: Mutex<Option<FusedPrograms>> = Mutex::new(None);

/// `None`: the plugin refused the program; its graphs run node by node without compiling again.
type FusedPrograms = HashMap<(Device, String), Option<Arc<Program>>>;

/// What each graph signature seen so far runs: its program and how many arguments it donates, or
/// `None` when its graphs run node by node (no fused lowering, or the plugin refused the program).
static SIGNED: Mutex<Option<HashMap<Vec<u8>, Option<Fused>>>> = Mutex::new(None);

/// A compiled fused program and the number of arguments it donates.
type Fused = (Arc<Program>, usize);

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
    super::repeat::segment_ended();
    compute_roots(super::node::take_live(thread), why)
}

/// The pending nodes this thread recorded, taken for [`launch`]; the repetition detector starts a
/// new segment, as at any sync.
pub(crate) fn take_recorded() -> Vec<Arc<Node>> {
    super::repeat::segment_ended();
    super::node::take_live(Some(super::node::current_thread()))
}

/// Computes nodes taken by [`take_recorded`] (on any thread). The repetition detector is left
/// alone: the thread that took them may be recording its next segment meanwhile.
pub(crate) fn launch(roots: Vec<Arc<Node>>, why: &str) -> Result<()> {
    let _lock = FUSING.lock().unwrap_or_else(|e| e.into_inner());
    compute_roots(roots, why)
}

/// Computes `live` (pending nodes of any devices) as one graph per device, with `FUSING` held by
/// the caller; on an error, whatever did not run stays registered, so a later sync still finds it.
fn compute_roots(live: Vec<Arc<Node>>, why: &str) -> Result<()> {
    let mut by_device: HashMap<Device, Vec<Arc<Node>>> = HashMap::new();
    for node in live {
        by_device.entry(node.device).or_default().push(node);
    }
    for (_, roots) in by_device {
        // Weak: the graph's outputs are what something else holds, not these references.
        let taken: Vec<std::sync::Weak<Node>> = roots.iter().map(Arc::downgrade).collect();
        if let Err(e) = compute_graph(roots, why) {
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
    super::repeat::segment_ended();
    compute_graph(roots, why)
}

/// Computes `roots` (all on one device) and the pending graph behind them, with `FUSING` held by
/// the caller.
fn compute_graph(roots: Vec<Arc<Node>>, why: &str) -> Result<()> {
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
    let generalized = match super::generalize::generalize(&order) {
        Ok(g) => g,
        Err(reason) => {
            crate::xla::dynamic::refused(&reason);
            None
        }
    };
    let mut plan = Plan::new(&order, generalized)?;
    match fused_for(&order, &plan)? {
        Some((program, donated)) => {
            let (done, uploaded) = run_fused(&order, &plan, &program, donated)?;
            // The program's inputs (the last references to donated ones) are dropped once it has
            // run, on another thread: dropping them here would wait for it.
            let mut inputs = std::mem::take(&mut plan.leaves);
            inputs.extend(uploaded);
            super::release::after(done, inputs);
            Ok(())
        }
        None => run_one_by_one(&order),
    }
}

/// The program that computes the planned graph: found by the graph's signature, else by its text
/// (compiled on a miss). `None` when the graph runs node by node.
fn fused_for(order: &[Arc<Node>], plan: &Plan) -> Result<Option<Fused>> {
    let signature = plan.signature(order, order[0].device);
    let lock = || SIGNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = lock().as_ref().and_then(|m| m.get(&signature)) {
        if known.is_some() {
            metrics::record_cache_hit();
        }
        return Ok(known.clone());
    }
    let fused = match plan.program_text(order) {
        Ok((text, donated)) => {
            let out_dtypes: Vec<DType> =
                plan.outputs.iter().flat_map(|&i| order[i].outputs.iter().map(|o| o.0)).collect();
            fused_program(text, order, out_dtypes).map(|program| (program, donated))
        }
        // A node without a fused lowering (a cast the plugin lacks): run node by node.
        Err(crate::pjrt::Error::Unsupported(_)) => None,
        Err(e) => return Err(pjrt_err(e)),
    };
    lock().get_or_insert_with(HashMap::new).insert(signature, fused.clone());
    Ok(fused)
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

/// Launches `program` on the planned graph's arguments and hands each returned node its buffers.
/// Returns the program's completion event (when the plugin gives one) and the host values it
/// uploaded as arguments.
fn run_fused(
    order: &[Arc<Node>],
    plan: &Plan,
    program: &Program,
    donated: usize,
) -> Result<(Option<Event>, Vec<Arc<Buffer>>)> {
    let device = order[0].device;
    let (client, pjrt_device) = registry::device(device)?;
    let uploaded: Vec<Arc<Buffer>> = plan
        .host_args
        .iter()
        .map(|(s, dtype)| scalar_args::upload(client, pjrt_device, device, s.as_bytes(), *dtype))
        .collect::<Result<_>>()?;
    let mut args: Vec<&Buffer> = plan.leaves.iter().map(|b| &**b).collect();
    args.extend(uploaded.iter().map(|b| &**b));
    let start = Instant::now();
    let (outputs, done) = program.exe.execute_async(&args).map_err(pjrt_err)?;
    metrics::record_execute(start.elapsed());
    metrics::record_fused(order.len(), donated);
    if plan.generalized.is_some() {
        metrics::record_dynamic_run();
    }
    let mut outputs = outputs.into_iter().map(Arc::new);
    for &i in &plan.outputs {
        let node = &order[i];
        let buffers: Vec<Arc<Buffer>> = outputs.by_ref().take(node.outputs.len()).collect();
        if buffers.len() != node.outputs.len() {
            return Err(Error::msg("xla: the fused program returned fewer outputs than planned"));
        }
        if let Some(g) = &plan.generalized {
            let extents = g.outputs[i].iter().map(|o| o.map(|_| g.extent)).collect();
            let _ = node.extents.set(extents);
        }
        node.complete(buffers);
    }
    // Nodes nobody outside holds were computed inside the program; free their inputs.
    for node in order {
        node.args().clear();
        node.ran();
    }
    drop(args);
    Ok((done, uploaded))
}

/// A computed view input as a storage the eager runtime can take.
fn eager_input(data: &Data, dtype: DType, len: usize, device: Device) -> Result<XlaStorage> {
    let buffer =
        data.ready().ok_or_else(|| Error::msg("xla: a pending input was not computed before its user"))?;
    Ok(XlaStorage::ready(buffer.clone(), data.extent(), dtype, len, device))
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
