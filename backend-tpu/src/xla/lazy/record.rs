//! Recording ops into the pending graph instead of running them. A node needs its outputs'
//! dtypes and lengths at once: they come from the op's eager program signature, lowered once
//! per key and cached (an op without a lowering reports `None`, and runs on the host instead).

use std::sync::Arc;

use oxtorch_core::ops::Prim;
use oxtorch_core::{DType, Device, Layout, Result, Scalar};

use super::node::{Arg, Node, Step};
use super::{fuse, limit, repeat};
use crate::pjrt::Error as PjrtError;
use crate::xla::cache::{Input, KeyCache, Op};
use crate::xla::storage::XlaStorage;
use crate::xla::{pjrt_err, program};

/// Output (dtype, flat length) of each key, or `None` when the op has no lowering.
type Signature = Option<Arc<[(DType, usize)]>>;

static SIGNATURES: KeyCache<Signature> = KeyCache::new();

/// The outputs of `prim` on `inputs`, from its eager program's signature.
fn signature(prim: &Prim, inputs: &[Input<'_>], device: Device) -> Result<Signature> {
    if let Some(sig) = SIGNATURES.lookup(Op::Prim(prim), inputs, device) {
        return Ok(sig);
    }
    let sig = match program::prim_program(prim, inputs, false) {
        Ok(text) => {
            let parsed = crate::pjrt::parse_main_signature(&text).map_err(pjrt_err)?;
            let mut outs = Vec::with_capacity(parsed.results.len());
            for t in &parsed.results {
                match (t.element_type.dtype(), t.dims.as_slice()) {
                    (Some(dtype), &[n]) => outs.push((dtype, n.max(0) as usize)),
                    _ => return Ok(None),
                }
            }
            Some(Arc::from(outs))
        }
        Err(PjrtError::Unsupported(_)) => None,
        Err(e) => return Err(pjrt_err(e)),
    };
    SIGNATURES.insert(Op::Prim(prim), inputs, device, sig.clone());
    Ok(sig)
}

fn view(s: &XlaStorage, layout: &Layout) -> Arg {
    Arg::View { data: s.data.clone(), dtype: s.dtype, len: s.len, layout: layout.clone() }
}

/// Syncs everything pending first when the graph has grown past its bound, or when it just
/// completed a block of a repeating op sequence (`repeat`).
fn bound_graph() -> Result<()> {
    if super::node::pending_nodes() >= limit() {
        fuse::sync_all("the pending graph reached OXTORCH_XLA_FUSE_LIMIT ops")?;
    } else if repeat::cut_due() {
        fuse::sync_all("the recorded ops repeat a block of the sequence")?;
    }
    Ok(())
}

/// Records a node and lets the repetition detector see it.
fn record(step: Step, device: Device, args: Vec<Arg>, outputs: Vec<(DType, usize)>) -> Arc<Node> {
    let node = Node::record(step, device, args, outputs);
    repeat::observe(&node);
    node
}

/// Records `prim` on `inputs`; `None` when it has no lowering (the caller runs it on the host).
pub(crate) fn prim(
    prim: &Prim,
    inputs: &[(&XlaStorage, &Layout)],
    keys: &[Input<'_>],
    device: Device,
) -> Result<Option<Vec<XlaStorage>>> {
    let Some(sig) = signature(prim, keys, device)? else {
        return Ok(None);
    };
    bound_graph()?;
    let args = inputs.iter().map(|(s, l)| view(s, l)).collect();
    let node = record(Step::Prim(prim.clone()), device, args, sig.to_vec());
    Ok(Some((0..sig.len()).map(|i| XlaStorage::pending(node.clone(), i)).collect()))
}

/// Records `dst[dst_layout] = cast(src[src_layout])` and points `dst` at the result.
pub(crate) fn copy_into(
    dst: &mut XlaStorage,
    dst_layout: &Layout,
    src: &XlaStorage,
    src_layout: &Layout,
) -> Result<()> {
    bound_graph()?;
    let args = vec![view(dst, dst_layout), view(src, src_layout)];
    let node = record(Step::CopyInto, dst.device, args, vec![(dst.dtype, dst.len)]);
    *dst = XlaStorage::pending(node, 0);
    Ok(())
}

/// Records `dst[layout] = value` and points `dst` at the result.
pub(crate) fn fill(dst: &mut XlaStorage, layout: &Layout, value: Scalar) -> Result<()> {
    bound_graph()?;
    let args = vec![view(dst, layout), Arg::Scalar(value, dst.dtype)];
    let node = record(Step::FillInto, dst.device, args, vec![(dst.dtype, dst.len)]);
    *dst = XlaStorage::pending(node, 0);
    Ok(())
}

/// Records a flat buffer of `numel` copies of `value`.
pub(crate) fn full(numel: usize, value: Scalar, dtype: DType, device: Device) -> Result<XlaStorage> {
    bound_graph()?;
    let node = record(Step::Full { numel }, device, vec![Arg::Scalar(value, dtype)], vec![(dtype, numel)]);
    Ok(XlaStorage::pending(node, 0))
}
