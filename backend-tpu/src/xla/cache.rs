//! The executable cache: one compiled program per (op with its parameters, input dtypes, buffer
//! lengths and layouts, device).
//!
//! A lookup hashes the borrowed key parts with a small multiplicative hasher and compares them in
//! place: a hit allocates nothing and formats nothing. Prims without a lowering are cached too (as
//! [`Compiled::Host`]), so they are not lowered again on every call.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, Mutex};

use oxtorch_core::ops::Prim;
use oxtorch_core::{DType, Device, Layout};

use super::grid_box::in_grid;
use crate::pjrt::Executable;

/// What a cached program does (borrowed, for lookups).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op<'a> {
    /// A prim. `Full`'s value is not part of the key: it is an input of the program.
    Prim(&'a Prim),
    /// `dst[layout] = cast(src)`: inputs (dst, src).
    CopyInto,
    /// `dst[layout] = value`: inputs (dst, 0-d value).
    FillInto,
}

impl Op<'_> {
    /// The op's name for messages and metrics.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Prim(p) => p.name(),
            Op::CopyInto => "copy_",
            Op::FillInto => "fill_",
        }
    }
}

/// An owned [`Op`], kept in the cache.
#[derive(Debug)]
enum OwnedOp {
    Prim(Prim),
    CopyInto,
    FillInto,
}

/// Prim equality for the key: parameters compared, `Full`'s value ignored. A unary op's float
/// parameters compare by sign too: `==` takes -0.0 for 0.0, and their programs differ in the sign
/// of the zeros they make (`leaky_relu(-1, 0.0)` is -0.0, with slope -0.0 it is 0.0). Their short
/// `Debug` texts tell them apart; only unary ops that are `==` are printed.
fn same_prim(a: &Prim, b: &Prim) -> bool {
    match (a, b) {
        (Prim::Full { shape: sa, dtype: da, .. }, Prim::Full { shape: sb, dtype: db, .. }) => {
            sa == sb && da == db
        }
        (Prim::Unary(x), Prim::Unary(y)) => x == y && format!("{x:?}") == format!("{y:?}"),
        (a, b) => a == b,
    }
}

impl OwnedOp {
    fn new(op: Op<'_>) -> Self {
        match op {
            Op::Prim(p) => OwnedOp::Prim(p.clone()),
            Op::CopyInto => OwnedOp::CopyInto,
            Op::FillInto => OwnedOp::FillInto,
        }
    }

    fn matches(&self, op: Op<'_>) -> bool {
        match (self, op) {
            (OwnedOp::Prim(a), Op::Prim(b)) => same_prim(a, b),
            (OwnedOp::CopyInto, Op::CopyInto) | (OwnedOp::FillInto, Op::FillInto) => true,
            _ => false,
        }
    }
}

/// One input as the key sees it. A non-zero storage offset is a runtime input of the program, so
/// the key records only whether there is one: a view that moves along its storage (a KV cache
/// position, a sliding window) never compiles again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Input<'a> {
    pub dtype: DType,
    pub len: usize,
    pub layout: &'a Layout,
}

impl Input<'_> {
    /// Whether the program takes this input's offset as a runtime argument.
    pub fn has_offset(&self) -> bool {
        runtime_offset(self.layout, self.len)
    }
}

/// Whether a view of a storage of `len` elements takes its offset as a runtime argument: when the
/// offset is not 0, and for every view with fewer elements than its storage even at offset 0, so
/// that a window at the start and the same window further on run one program (a batch stacked
/// from dataset rows would otherwise compile again for each place row 0 can take).
pub(crate) fn runtime_offset(layout: &Layout, len: usize) -> bool {
    layout.offset() != 0 || layout.numel() < len
}

/// Layout equality for the key (storages of `len` elements): sizes, strides, whether the offset is
/// a runtime argument, and whether the view is a box of its buffer's grid there (see `grid_box`).
fn same_view(a: &Layout, b: &Layout, len: usize) -> bool {
    a.dims() == b.dims()
        && a.strides() == b.strides()
        && runtime_offset(a, len) == runtime_offset(b, len)
        && in_grid(a, len) == in_grid(b, len)
}

/// An owned [`Input`].
#[derive(Debug)]
struct OwnedInput {
    dtype: DType,
    len: usize,
    layout: Layout,
}

/// A compiled program and what its outputs are.
pub(crate) struct Program {
    pub exe: Executable,
    /// The dtype of each output.
    pub out_dtypes: Vec<DType>,
}

/// A cache entry's payload.
#[derive(Clone)]
pub(crate) enum Compiled {
    /// Run this program.
    Exe(Arc<Program>),
    /// No lowering: run the op on the host.
    Host,
}

struct Entry<T> {
    op: OwnedOp,
    inputs: Vec<OwnedInput>,
    device: Device,
    value: T,
}

impl<T> Entry<T> {
    fn matches(&self, op: Op<'_>, inputs: &[Input<'_>], device: Device) -> bool {
        self.device == device
            && self.inputs.len() == inputs.len()
            && self
                .inputs
                .iter()
                .zip(inputs)
                .all(|(a, b)| a.dtype == b.dtype && a.len == b.len && same_view(&a.layout, b.layout, b.len))
            && self.op.matches(op)
    }
}

/// FxHash's multiply-rotate hasher: a few cycles per word, plenty for a cache key.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

fn hash_key(op: Op<'_>, inputs: &[Input<'_>], device: Device) -> u64 {
    let mut h = FxHasher::default();
    match op {
        // The prim's family and name; parameters are compared on lookup, not hashed.
        Op::Prim(p) => {
            std::mem::discriminant(p).hash(&mut h);
            p.name().hash(&mut h);
            if let Prim::Full { shape, .. } = p {
                shape.hash(&mut h);
            }
        }
        other => std::mem::discriminant(&other).hash(&mut h),
    }
    device.hash(&mut h);
    for i in inputs {
        i.dtype.hash(&mut h);
        h.write_usize(i.len);
        i.layout.dims().hash(&mut h);
        i.layout.strides().hash(&mut h);
        h.write_usize(usize::from(i.has_offset()));
    }
    h.finish()
}

/// Keys are already hashes: the map uses them as they are.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Map<T> = HashMap<u64, Vec<Entry<T>>, BuildHasherDefault<Prehashed>>;

/// A map from (op with its parameters, input dtypes/lengths/views, device) to a `T`: the programs
/// of the eager runtime, and the output signatures the deferred mode records nodes with.
pub(crate) struct KeyCache<T> {
    map: Mutex<Option<Map<T>>>,
}

impl<T: Clone> KeyCache<T> {
    /// An empty cache (usable in a `static`).
    pub const fn new() -> Self {
        KeyCache { map: Mutex::new(None) }
    }

    /// The value for the key, if any.
    pub fn lookup(&self, op: Op<'_>, inputs: &[Input<'_>], device: Device) -> Option<T> {
        let hash = hash_key(op, inputs, device);
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.as_ref()?.get(&hash)?.iter().find(|e| e.matches(op, inputs, device)).map(|e| e.value.clone())
    }

    /// Stores a value for the key. A key that does not equal itself (a NaN parameter) is not stored.
    pub fn insert(&self, op: Op<'_>, inputs: &[Input<'_>], device: Device, value: T) {
        if let Op::Prim(p) = op {
            if !same_prim(p, p) {
                return;
            }
        }
        let hash = hash_key(op, inputs, device);
        let entry = Entry {
            op: OwnedOp::new(op),
            inputs: inputs
                .iter()
                .map(|i| OwnedInput { dtype: i.dtype, len: i.len, layout: i.layout.clone() })
                .collect(),
            device,
            value,
        };
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let bucket = map.get_or_insert_with(Map::default).entry(hash).or_default();
        if !bucket.iter().any(|e| e.matches(op, inputs, device)) {
            bucket.push(entry);
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(0, |c| c.values().map(Vec::len).sum())
    }
}

/// The eager runtime's programs.
static PROGRAMS: KeyCache<Compiled> = KeyCache::new();

/// The cached program for the key, if any.
pub(crate) fn lookup(op: Op<'_>, inputs: &[Input<'_>], device: Device) -> Option<Compiled> {
    PROGRAMS.lookup(op, inputs, device)
}

/// Stores a program for the key.
pub(crate) fn insert(op: Op<'_>, inputs: &[Input<'_>], device: Device, compiled: Compiled) {
    PROGRAMS.insert(op, inputs, device, compiled)
}

/// The number of cached eager programs (compiled or host).
pub fn cached_programs() -> usize {
    PROGRAMS.len()
}
