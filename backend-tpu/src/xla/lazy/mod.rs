//! Deferred execution (`Mode::Fused`): ops on `xla`/`tpu` tensors record nodes of a pending graph
//! instead of running; at a sync point the pending graph becomes one StableHLO program, compiled
//! once per distinct graph and cached (in memory and on disk), and launched once.
//!
//! - [`mode`](mode()): eager (the default) or fused, per process (`OXTORCH_XLA_MODE`,
//!   [`set_mode`]) or per scope ([`ModeGuard`], [`with_mode`]).
//! - `node`: the graph; a storage's data is either a device buffer or an output of a node.
//! - `record`: recording an op (its output types come from its eager lowering, cached per key).
//! - `fuse`: computing nodes as one program; what anything outside the graph still holds is
//!   returned, everything else stays inside the program.
//!
//! Sync points: reading values (`to_vec`, `item`, printing, `.to("cpu")`, a host fallback),
//! [`sync`] (`torch_xla`'s `mark_step`), the end of [`compile`], a bound on the graph's size
//! (`OXTORCH_XLA_FUSE_LIMIT`, recorded nodes not yet run, default 20,000), and the end of a block
//! of a repeating op sequence (`repeat`: a loop that never reads runs one cached program per
//! block).

mod fuse;
mod generalize;
mod mode;
mod node;
mod plan;
mod record;
mod release;
mod repeat;

use std::sync::OnceLock;

pub use mode::{mode, set_mode, with_mode, Mode, ModeGuard};

pub(crate) use fuse::materialize;
pub(crate) use mode::deferring;
pub(crate) use node::{Data, Node};
pub(crate) use record::{
    copy_into as record_copy_into, fill as record_fill, full as record_full, prim as record_prim,
};

/// Computes every pending tensor on every device as one program per device (`torch_xla`'s
/// `mark_step`); the results stay on the devices. Does nothing in eager mode.
pub fn sync() -> oxtorch_core::Result<()> {
    fuse::sync_all("sync()")
}

/// Marks the end of a training step: when this thread defers ops, computes everything it recorded
/// and what that reads (the optimizers call this after their update, so a fused training loop runs
/// one program per step; what other threads recorded meanwhile, such as a data loader's next batch,
/// waits for its own reader); in eager mode it does nothing.
pub fn step_boundary() -> oxtorch_core::Result<()> {
    if deferring() {
        fuse::sync_this_thread("end of an optimizer step")
    } else {
        Ok(())
    }
}

/// Takes what this thread recorded so far (and the pending values it reads) as one graph to
/// compute with [`Recorded::launch`], possibly on another thread. Recording goes on meanwhile: the
/// next ops start a new graph, and may read this one's results (reading a value waits until they
/// are computed). A decode loop computes step n this way on a helper thread while it records step
/// n + 1. Without pending ops (eager mode) the graph is empty.
///
/// Until it is launched, the taken graph counts against `OXTORCH_XLA_FUSE_LIMIT` together with
/// what is recorded meanwhile.
pub fn take_recorded() -> Recorded {
    Recorded { roots: fuse::take_recorded() }
}

/// A graph taken by [`take_recorded`], not yet computed. Dropped without [`Recorded::launch`], its
/// nodes go back to the pending graph, for the next sync.
#[must_use = "a taken graph runs when launched (dropped, it waits for the next sync)"]
#[derive(Debug)]
pub struct Recorded {
    roots: Vec<std::sync::Arc<Node>>,
}

impl Recorded {
    /// Computes the graph as one program per device (compiled once per distinct graph) and returns
    /// when its results are in device buffers.
    pub fn launch(mut self) -> oxtorch_core::Result<()> {
        fuse::launch(std::mem::take(&mut self.roots), "Recorded::launch()")
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        node::relive(self.roots.iter().map(std::sync::Arc::downgrade).collect());
    }
}

/// Runs `f` with its ops deferred, then computes everything it left pending as one program: a
/// whole training step (forward, backward, optimizer update) becomes one compiled program,
/// compiled on the first call and found in the cache on the next. Rust control flow inside `f`
/// that takes another path records another graph, which compiles once more (never a stale
/// program); ops whose output shape depends on data run where they are and split the program.
pub fn compile<R>(f: impl FnOnce() -> R) -> oxtorch_core::Result<R> {
    let out = with_mode(Mode::Fused, f);
    fuse::sync_all("end of compile()")?;
    Ok(out)
}

/// The length (in recorded ops) of the repeating block the detector found, if it found one: a
/// loop that never syncs runs as one program per block of this many ops.
pub fn detected_period() -> Option<usize> {
    repeat::period()
}

/// Turns the detection of repeating op sequences on or off for the whole process (default: on,
/// unless `OXTORCH_XLA_DETECT_REPEATS=0`); returns whether it was on. Off, a loop that never
/// syncs grows one graph until the graph bound.
pub fn set_repeat_detection(on: bool) -> bool {
    repeat::set_enabled(on)
}

/// Recorded nodes not yet run after which the next op syncs everything first.
pub(crate) fn limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("OXTORCH_XLA_FUSE_LIMIT")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(20_000)
            .max(1)
    })
}
