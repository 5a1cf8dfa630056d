//! A robustness sweep of the Result-returning Tensor API under adversarial arguments: a service
//! embedding oxtorch must get `Ok` or `Err` from every call, never a panic, an abort (a huge
//! allocation), an overflow or a hang. A seeded SplitMix64 draws small inputs of every dtype,
//! shape (0-d, empty) and layout (contiguous, transposed, expanded, strided) and feeds ~150 ops
//! out-of-range dims, overflowing sizes, NaN/inf bounds, bad strings and mismatched operands.
//! Each call runs under `catch_unwind`; every panic is collected with the call and its arguments,
//! and one assert at the end lists them all. Errors must carry a non-empty, single-line message.
//!
//! Huge sizes in the main sweep are chosen so that the element count overflows `usize` (or the
//! byte count exceeds `isize::MAX`), which a size check refuses before any allocation. Sizes that
//! are huge but representable (terabytes) are in an `#[ignore]`d test: they must be `Err` as well
//! (fallible allocations and address-space probes), which holds where the OS refuses to reserve
//! terabytes (`vm.overcommit_memory` 0 or 2); with unconditional overcommit they would be killed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use oxtorch_tensor::{
    linalg, DType, Device, Ellipsis, NewAxis, Operand, Padding, Result, Tensor, TensorIndex,
};

use crate::common::{panic_message, quietly};

/// SplitMix64: a tiny seeded generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// Dims: valid, negative, out of range and extreme.
const DIMS: [isize; 10] = [0, 1, -1, 2, -3, 5, 64, isize::MAX, isize::MIN, -65];
/// Sizes for arguments that only index or view (never allocate in proportion).
const VIEW_SIZES: [usize; 7] = [0, 1, 2, 5, 1 << 40, usize::MAX, usize::MAX / 2];
/// i64 arguments (k, n, offsets, bins...).
const I64S: [i64; 9] = [0, 1, -1, 2, 5, -5, 100, i64::MAX, i64::MIN];
/// Floats including the non-finite.
const F64S: [f64; 10] =
    [0.0, 1.0, -1.0, 0.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e-300, 2.0];
/// Values the inputs are filled from (non-finite ones only for float dtypes).
const VALUES: [f64; 12] =
    [0.0, 1.0, -1.0, 2.5, -3.75, 100.0, 7.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30];
/// Input shapes: 0-d, empty, vectors, matrices, batches.
const SHAPES: [&[usize]; 9] =
    [&[], &[0], &[3], &[1], &[2, 3], &[3, 3], &[2, 0, 3], &[1, 3, 1, 2], &[2, 3, 4]];

/// One input tensor with a description of how it was made.
struct Input {
    t: Tensor,
    desc: String,
}

/// A small tensor of a random dtype, shape and layout.
fn input(rng: &mut Rng) -> Input {
    let dtype = rng.pick(&DType::ALL);
    let shape: Vec<usize> = rng.pick(&SHAPES).to_vec();
    let layout = rng.below(4);
    let made = make(rng, dtype, &shape, layout);
    match made {
        Ok(t) => Input { t, desc: format!("{dtype:?}{shape:?}/layout{layout}") },
        // A layout the shape cannot take: a plain contiguous tensor instead.
        Err(_) => {
            let t = make(rng, dtype, &shape, 0).expect("a contiguous input");
            Input { t, desc: format!("{dtype:?}{shape:?}/layout0") }
        }
    }
}

fn make(rng: &mut Rng, dtype: DType, shape: &[usize], layout: usize) -> Result<Tensor> {
    let float = dtype.is_float();
    let fill = |rng: &mut Rng, n: usize| -> Vec<f64> {
        (0..n)
            .map(|_| {
                let v = rng.pick(&VALUES);
                if float || (v.is_finite() && v.abs() < 100.0) {
                    v
                } else {
                    3.0
                }
            })
            .collect()
    };
    let rank = shape.len();
    match layout {
        // Transposed: built with the first and last dims swapped, then transposed back.
        1 if rank >= 2 => {
            let mut s = shape.to_vec();
            s.swap(0, rank - 1);
            let n = s.iter().product();
            Tensor::from_vec(fill(rng, n), s)?.to_dtype(dtype)?.transpose(0, rank as isize - 1)
        }
        // Expanded: a size-1 first dim broadcast.
        2 if rank >= 1 => {
            let mut s = shape.to_vec();
            s[0] = 1;
            let n = s.iter().product();
            Tensor::from_vec(fill(rng, n), s)?.to_dtype(dtype)?.expand(shape)
        }
        // Strided: every other element of a last dim twice as long.
        3 if rank >= 1 => {
            let mut s = shape.to_vec();
            s[rank - 1] *= 2;
            let n = s.iter().product();
            Tensor::from_vec(fill(rng, n), s)?.to_dtype(dtype)?.slice(-1, .., 2)
        }
        _ => {
            let n = shape.iter().product();
            Tensor::from_vec(fill(rng, n), shape.to_vec())?.to_dtype(dtype)
        }
    }
}

/// An index tensor: int64 (in range, negative or out of range), or a wrong dtype.
fn index(rng: &mut Rng) -> Input {
    let shapes: [&[usize]; 6] = [&[], &[0], &[2], &[3], &[2, 3], &[1, 1]];
    let shape: Vec<usize> = rng.pick(&shapes).to_vec();
    let n: usize = shape.iter().product();
    let vals: Vec<i64> = (0..n).map(|_| rng.pick(&[0, 1, 2, -1, -4, 3, 7, i64::MAX, i64::MIN])).collect();
    let dtype =
        rng.pick(&[DType::I64, DType::I64, DType::I64, DType::I32, DType::F32, DType::Bool, DType::U8]);
    let t = Tensor::from_vec(vals, shape.clone()).and_then(|t| t.to_dtype(dtype)).expect("an index tensor");
    Input { t, desc: format!("index {dtype:?}{shape:?}") }
}

/// A bool mask of a random (often mismatched) shape, or a non-bool "mask".
fn mask(rng: &mut Rng) -> Input {
    let shape: Vec<usize> = rng.pick(&SHAPES).to_vec();
    let n: usize = shape.iter().product();
    let vals: Vec<bool> = (0..n).map(|_| rng.coin()).collect();
    let dtype = rng.pick(&[DType::Bool, DType::Bool, DType::U8, DType::F32]);
    let t = Tensor::from_vec(vals, shape.clone()).and_then(|t| t.to_dtype(dtype)).expect("a mask");
    Input { t, desc: format!("mask {dtype:?}{shape:?}") }
}

/// Collects the failures of the sweep.
#[derive(Default)]
struct Sweep {
    failures: Vec<String>,
    calls: usize,
    names: std::collections::BTreeSet<&'static str>,
}

impl Sweep {
    /// Runs one call under `catch_unwind`: a panic, or an `Err` whose message is empty or spans
    /// lines, is a failure.
    fn call<T>(&mut self, name: &'static str, args: impl Fn() -> String, f: impl FnOnce() -> Result<T>) {
        self.calls += 1;
        self.names.insert(name);
        if std::env::var_os("ROBUSTNESS_TRACE").is_some() {
            eprintln!("robustness: {name}({})", args());
        }
        match quietly(|| catch_unwind(AssertUnwindSafe(f))) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let msg = e.to_string();
                if msg.trim().is_empty() {
                    self.failures.push(format!("{name}({}): Err with an empty message", args()));
                } else if msg.trim_end().contains('\n') {
                    self.failures.push(format!("{name}({}): Err message spans lines: {msg:?}", args()));
                }
            }
            Err(payload) => {
                let m = panic_message(&*payload);
                self.failures.push(format!("{name}({}): PANIC: {m}", args()));
            }
        }
    }

    /// [`Sweep::call`] on a thread of its own with a timeout, for calls whose arguments could
    /// make a loop run for ages (the closure builds its own tensors: only strings cross threads).
    fn timed(&mut self, name: &'static str, args: String, f: impl FnOnce() -> Result<()> + Send + 'static) {
        self.calls += 1;
        self.names.insert(name);
        let (tx, rx) = mpsc::channel::<std::result::Result<std::result::Result<(), String>, String>>();
        std::thread::spawn(move || {
            let r = quietly(|| catch_unwind(AssertUnwindSafe(f)));
            let out = match r {
                Ok(Ok(())) => Ok(Ok(())),
                Ok(Err(e)) => Ok(Err(e.to_string())),
                Err(p) => Err(panic_message(&*p)),
            };
            let _ = tx.send(out);
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(msg))) => {
                if msg.trim().is_empty() || msg.trim_end().contains('\n') {
                    self.failures.push(format!("{name}({args}): bad Err message {msg:?}"));
                }
            }
            Ok(Err(m)) => self.failures.push(format!("{name}({args}): PANIC: {m}")),
            Err(_) => self.failures.push(format!("{name}({args}): HANG (no answer in 10 s)")),
        }
    }

    fn finish(self, what: &str) {
        assert!(
            self.failures.is_empty(),
            "{what}: {} of {} calls ({} functions) failed:\n{}",
            self.failures.len(),
            self.calls,
            self.names.len(),
            self.failures.join("\n")
        );
    }
}

/// Creation functions with adversarial sizes and bounds.
fn creation(s: &mut Sweep, rng: &mut Rng) {
    let dtype = rng.pick(&DType::ALL);
    // Element counts that overflow usize: a size check must refuse them.
    let overflowing: [&[usize]; 4] =
        [&[usize::MAX, 2], &[1 << 32, 1 << 32], &[1 << 62, 8], &[3, usize::MAX / 2 + 1]];
    let sh = rng.pick(&overflowing).to_vec();
    s.call("zeros", || format!("{sh:?}, {dtype:?}"), || Tensor::zeros(sh.clone(), dtype));
    s.call("ones", || format!("{sh:?}, {dtype:?}"), || Tensor::ones(sh.clone(), dtype));
    s.call("empty", || format!("{sh:?}, {dtype:?}"), || Tensor::empty(sh.clone(), dtype));
    let v = rng.pick(&F64S);
    s.call("full", || format!("{sh:?}, {v}, {dtype:?}"), || Tensor::full(sh.clone(), v, dtype));
    s.call("full(small)", || format!("[2], {v}, {dtype:?}"), || Tensor::full([2], v, dtype));
    s.call("randn", || format!("{sh:?}, {dtype:?}"), || Tensor::randn(sh.clone(), dtype));
    s.call("rand", || format!("{sh:?}, {dtype:?}"), || Tensor::rand(sh.clone(), dtype));
    s.call("randint", || format!("0, 10, {sh:?}"), || Tensor::randint(0, 10, sh.clone(), dtype));
    let (lo, hi) = (rng.pick(&I64S), rng.pick(&I64S));
    s.call(
        "randint(bounds)",
        || format!("{lo}, {hi}, [3], {dtype:?}"),
        || Tensor::randint(lo, hi, [3], dtype),
    );
    s.call("randn(int dtype)", || format!("[2], {dtype:?}"), || Tensor::randn([2], dtype));
    // (strides whose extent overflows: shapes like [1 << 32, 1 << 32] with unit strides are a
    // representable 2^33-element storage, which belongs with the huge allocations below)
    let huge_strides = [usize::MAX / 2, 1];
    s.call(
        "empty_strided",
        || format!("{sh:?}, {huge_strides:?}"),
        || Tensor::empty_strided(&sh, &huge_strides, dtype),
    );
    let (st, sd) = ([2usize, 3], [usize::MAX, 1]);
    s.call("empty_strided(stride)", || format!("{st:?}, {sd:?}"), || Tensor::empty_strided(&st, &sd, dtype));
    s.call("empty_strided(rank)", || "[2, 3], [1]".into(), || Tensor::empty_strided(&[2, 3], &[1], dtype));
    // (3 × 2^32 elements is representable: it belongs with the huge allocations below)
    let n = usize::MAX;
    s.call("eye", || format!("{n}, None"), || Tensor::eye(n, None, dtype));
    s.call("eye(m)", || format!("3, Some({n})"), || Tensor::eye(3, Some(n), dtype));
    // arange: zero/non-finite steps, inconsistent signs, NaN bounds, ranges past memory.
    let (a, b, c) =
        (rng.pick(&F64S), rng.pick(&F64S), rng.pick(&[0.0, f64::NAN, f64::INFINITY, -1.0, 1e-300]));
    s.call("arange_step(f64)", || format!("{a}, {b}, {c}"), || Tensor::arange_step(a, b, c, dtype));
    let (ia, ib, ic) = (rng.pick(&I64S), rng.pick(&I64S), rng.pick(&[0i64, 1, -1, i64::MIN, i64::MAX]));
    // Ranges of at most 2^63 / step elements: always beyond isize::MAX / 8 bytes or tiny.
    let huge_or_small = (ib as i128 - ia as i128).unsigned_abs() / ic.unsigned_abs().max(1) as u128;
    if ic != 0 && !(1000..=(1u128 << 62)).contains(&huge_or_small) {
        s.call(
            "arange_step(i64)",
            || format!("{ia}, {ib}, {ic}"),
            || Tensor::arange_step(ia, ib, ic, DType::I64),
        );
    }
    s.call("arange(nan)", || "NaN".into(), || Tensor::arange(f64::NAN, dtype));
    s.call("arange(inf)", || "inf".into(), || Tensor::arange(f64::INFINITY, dtype));
    s.call("arange(-5)", || "-5".into(), || Tensor::arange(-5, dtype));
    let (ls, le) = (rng.pick(&F64S), rng.pick(&F64S));
    s.call("linspace", || format!("{ls}, {le}, 5, {dtype:?}"), || Tensor::linspace(ls, le, 5, dtype));
    s.call(
        "linspace(usize::MAX)",
        || "0, 1, usize::MAX".into(),
        || Tensor::linspace(0.0, 1.0, usize::MAX, dtype),
    );
    let base = rng.pick(&F64S);
    s.call("logspace", || format!("{ls}, {le}, 4, {base}"), || Tensor::logspace(ls, le, 4, base, dtype));
    s.call("scalar_tensor", || format!("{v}, {dtype:?}"), || Tensor::scalar_tensor(v, dtype));
    let (r, c2, off) = (rng.pick(&I64S), rng.pick(&I64S), rng.pick(&I64S));
    if r.unsigned_abs().min(c2.unsigned_abs()) < 1000 || r < 0 || c2 < 0 {
        s.call(
            "tril_indices",
            || format!("{r}, {c2}, {off}"),
            || Tensor::tril_indices(r, c2, off, Device::Cpu),
        );
        s.call(
            "triu_indices",
            || format!("{r}, {c2}, {off}"),
            || Tensor::triu_indices(r, c2, off, Device::Cpu),
        );
    }
    let wl = rng.pick(&[-1i64, 0, 1, 5, i64::MIN]);
    s.call("hann_window", || format!("{wl}"), || Tensor::hann_window(wl, rng_bool(wl), dtype));
    let buf = [1u8, 2, 3, 4, 5, 6, 7];
    let cnt = rng.pick(&[None, Some(0), Some(1), Some(3), Some(usize::MAX)]);
    let offs = rng.pick(&[0, 1, 7, 8, usize::MAX]);
    s.call(
        "frombuffer",
        || format!("7 bytes, {dtype:?}, {cnt:?}, {offs}"),
        || Tensor::frombuffer(&buf, dtype, cnt, offs),
    );
    s.call(
        "from_vec(bad shape)",
        || "3 values, [2, 2]".into(),
        || Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [2, 2]),
    );
    s.call(
        "from_vec(overflow)",
        || "1 value, [usize::MAX, 2]".into(),
        || Tensor::from_vec(vec![1.0f32], sh.clone()),
    );
}

fn rng_bool(v: i64) -> bool {
    v & 1 == 1
}

/// Shape and view ops.
fn shape_ops(s: &mut Sweep, rng: &mut Rng, x: &Input, y: &Input) {
    let (t, d) = (&x.t, x.desc.as_str());
    let (d0, d1) = (rng.pick(&DIMS), rng.pick(&DIMS));
    let dims_list: Vec<Vec<isize>> = vec![
        vec![-1, -1],
        vec![isize::MAX, 2],
        vec![isize::MAX, isize::MAX],
        vec![-2, 3],
        vec![0, -1],
        vec![1 << 40, 1 << 40, 1 << 40],
        vec![isize::MIN],
        vec![],
    ];
    let dl = rng.pick(&dims_list);
    s.call("reshape", || format!("{d}, {dl:?}"), || t.reshape(dl.clone()));
    s.call("view", || format!("{d}, {dl:?}"), || t.view(dl.clone()));
    s.call("expand", || format!("{d}, {dl:?}"), || t.expand(dl.clone()));
    s.call("expand(smaller)", || format!("{d}, [0]"), || t.expand([0isize]));
    s.call("permute", || format!("{d}, {dl:?}"), || t.permute(dl.clone()));
    s.call("permute(repeated)", || format!("{d}, [0, 0]"), || t.permute([0isize, 0]));
    s.call("repeat", || format!("{d}, {dl:?}"), || t.repeat(dl.clone()));
    s.call("tile", || format!("{d}, {dl:?}"), || t.tile(dl.clone()));
    s.call("flip", || format!("{d}, {dl:?}"), || t.flip(dl.clone()));
    s.call("squeeze_dims", || format!("{d}, {dl:?}"), || t.squeeze_dims(dl.clone()));
    s.call("unflatten", || format!("{d}, {d0}, {dl:?}"), || t.unflatten(d0, dl.clone()));
    s.call("transpose", || format!("{d}, {d0}, {d1}"), || t.transpose(d0, d1));
    s.call("swapaxes", || format!("{d}, {d0}, {d1}"), || t.swapaxes(d0, d1));
    s.call("movedim", || format!("{d}, {d0}, {d1}"), || t.movedim(d0, d1));
    s.call("movedim(repeated)", || format!("{d}, [0, 0], [0, 1]"), || t.movedim([0isize, 0], [0isize, 1]));
    s.call("flatten", || format!("{d}, {d0}, {d1}"), || t.flatten(d0, d1));
    s.call("unsqueeze", || format!("{d}, {d0}"), || t.unsqueeze(d0));
    s.call("t", || d.to_string(), || t.t());
    s.call("mT", || d.to_string(), || t.mT());
    let (start, len) = (rng.pick(&DIMS), rng.pick(&VIEW_SIZES));
    s.call("narrow", || format!("{d}, {d0}, {start}, {len}"), || t.narrow(d0, start, len));
    s.call("narrow_copy", || format!("{d}, {d0}, {start}, {len}"), || t.narrow_copy(d0, start, len));
    let (a, b, step) = (rng.pick(&DIMS), rng.pick(&DIMS), rng.pick(&VIEW_SIZES));
    s.call("slice", || format!("{d}, {d0}, {a}..{b}, {step}"), || t.slice(d0, a..b, step));
    s.call("select", || format!("{d}, {d0}, {a}"), || t.select(d0, a));
    let (size, ustep) = (rng.pick(&VIEW_SIZES), rng.pick(&VIEW_SIZES));
    s.call("unfold", || format!("{d}, {d0}, {size}, {ustep}"), || t.unfold(d0, size, ustep));
    s.call("split", || format!("{d}, {size}, {d0}"), || t.split(size, d0));
    s.call("chunk", || format!("{d}, {size}, {d0}"), || t.chunk(size, d0));
    s.call("tensor_split", || format!("{d}, {size}, {d0}"), || t.tensor_split(size, d0));
    let sizes =
        rng.pick(&[vec![1usize, 1], vec![usize::MAX, 1], vec![usize::MAX, 2], vec![], vec![0, 0, 0, 3]]);
    s.call("split_with_sizes", || format!("{d}, {sizes:?}, {d0}"), || t.split_with_sizes(&sizes, d0));
    let idxs = rng.pick(&[vec![isize::MAX, isize::MIN], vec![2, 1], vec![-100]]);
    s.call("tensor_split_indices", || format!("{d}, {idxs:?}, {d0}"), || t.tensor_split_indices(&idxs, d0));
    s.call("unbind", || format!("{d}, {d0}"), || t.unbind(d0));
    s.call("diagonal", || format!("{d}, {a}, {d0}, {d1}"), || t.diagonal(a, d0, d1));
    // as_strided past the storage, or with sizes/strides whose extent overflows: must be Err.
    let strided: [(Vec<usize>, Vec<usize>, Option<usize>); 6] = [
        (vec![100], vec![1], None),
        (vec![2, 2], vec![usize::MAX, 1], None),
        (vec![usize::MAX, 2], vec![1, 1], None),
        (vec![2], vec![1 << 62], Some(0)),
        (vec![1], vec![1], Some(usize::MAX)),
        (vec![0, 3], vec![usize::MAX, usize::MAX], Some(usize::MAX)),
    ];
    let (sz, sd, so) = rng.pick(&strided);
    s.call("as_strided", || format!("{d}, {sz:?}, {sd:?}, {so:?}"), || t.as_strided(&sz, &sd, so));
    let bsh = rng.pick(&[vec![usize::MAX, 2], vec![0], vec![2, 0, 7], vec![1 << 62, 1 << 62]]);
    s.call("broadcast_to", || format!("{d}, {bsh:?}"), || t.broadcast_to(&bsh));
    let pads: [Vec<isize>; 6] = [
        vec![isize::MAX, isize::MAX],
        vec![-100, 0],
        vec![isize::MIN, 0],
        vec![1, 1, 1],
        vec![1, 1, isize::MAX, isize::MAX],
        vec![-1, -1],
    ];
    let pad = rng.pick(&pads);
    let mode = rng.pick(&["constant", "reflect", "replicate", "circular", "bogus", ""]);
    let pv = rng.pick(&[None, Some(f64::NAN), Some(1e300)]);
    s.call("pad", || format!("{d}, {pad:?}, {mode:?}, {pv:?}"), || t.pad(&pad, mode, pv));
    s.call("constant_pad_nd", || format!("{d}, {pad:?}"), || t.constant_pad_nd(&pad, 0.0));
    let shifts = rng.pick(&[vec![isize::MAX], vec![isize::MIN], vec![1, 2], vec![]]);
    s.call("roll", || format!("{d}, {shifts:?}, {dl:?}"), || t.roll(shifts.clone(), dl.clone()));
    let k = rng.pick(&I64S);
    s.call("rot90", || format!("{d}, {k}, [{d0}, {d1}]"), || t.rot90(k, [d0, d1]));
    s.call("rot90(same dims)", || format!("{d}, 1, [0, 0]"), || t.rot90(1, [0isize, 0]));
    s.call("diag", || format!("{d}, {k}"), || t.diag(k));
    s.call("diag_embed", || format!("{d}, {k}, {d0}, {d1}"), || t.diag_embed(k, d0, d1));
    s.call("tril", || format!("{d}, {k}"), || t.tril(k));
    s.call("triu", || format!("{d}, {k}"), || t.triu(k));
    let ri = rng.pick(&[-1i64, 0, 2, i64::MAX, i64::MIN]);
    if !(ri > 1000 && t.numel() == 1) {
        s.call(
            "repeat_interleave",
            || format!("{d}, {ri}, Some({d0})"),
            || t.repeat_interleave(ri, Some(d0)),
        );
    }
    s.call("view_dtype", || format!("{d}, {:?}", y.t.dtype()), || t.view_dtype(y.t.dtype()));
    s.call("reshape_as", || format!("{d}, {}", y.desc), || t.reshape_as(&y.t));
    s.call("view_as", || format!("{d}, {}", y.desc), || t.view_as(&y.t));
    s.call("expand_as", || format!("{d}, {}", y.desc), || t.expand_as(&y.t));
    let ushape = rng.pick(&[vec![0usize], vec![usize::MAX, 2], vec![2, 3]]);
    s.call("unravel_index", || format!("{d}, {ushape:?}"), || t.unravel_index(&ushape));
    // cat/stack of mismatched shapes and dtypes, and of empty lists.
    let (a_, b_) = (&x.t, &y.t);
    s.call("cat", || format!("[{d}, {}], {d0}", y.desc), || Tensor::cat(&[a_, b_], d0));
    s.call("cat(empty)", || "[], 0".into(), || Tensor::cat(&[], 0));
    s.call("stack", || format!("[{d}, {}], {d0}", y.desc), || Tensor::stack(&[a_, b_], d0));
    s.call("stack(empty)", || "[], 0".into(), || Tensor::stack(&[], 0));
    s.call("hstack", || format!("[{d}, {}]", y.desc), || Tensor::hstack(&[a_, b_]));
    s.call("vstack", || format!("[{d}, {}]", y.desc), || Tensor::vstack(&[a_, b_]));
    s.call("dstack(empty)", || "[]".into(), || Tensor::dstack(&[]));
    s.call("block_diag", || format!("[{d}, {}]", y.desc), || Tensor::block_diag(&[a_, b_]));
    s.call("cartesian_prod", || format!("[{d}, {}]", y.desc), || Tensor::cartesian_prod(&[a_, b_]));
    let ix = rng.pick(&["ij", "xy", "zz"]);
    s.call("meshgrid", || format!("[{d}, {}], {ix}", y.desc), || Tensor::meshgrid(&[a_, b_], ix));
    s.call("broadcast_tensors", || format!("[{d}, {}]", y.desc), || Tensor::broadcast_tensors(&[a_, b_]));
}

/// Reductions, scans and sorting with bad dims, k and dtypes.
fn reductions(s: &mut Sweep, rng: &mut Rng, x: &Input) {
    let (t, d) = (&x.t, x.desc.as_str());
    let dim = rng.pick(&DIMS);
    let dims = rng.pick(&[vec![dim], vec![0, 0], vec![isize::MIN, isize::MAX], vec![-1, 1]]);
    let keep = rng.coin();
    s.call("sum", || format!("{d}, {dims:?}, {keep}"), || t.sum(dims.clone(), keep));
    s.call("mean", || format!("{d}, {dims:?}, {keep}"), || t.mean(dims.clone(), keep));
    s.call("prod", || format!("{d}, {dims:?}, {keep}"), || t.prod(dims.clone(), keep));
    let corr = rng.pick(&F64S);
    s.call("std", || format!("{d}, {dims:?}, {corr}"), || t.std(dims.clone(), corr, keep));
    s.call("var", || format!("{d}, {dims:?}, {corr}"), || t.var(dims.clone(), corr, keep));
    let p = rng.pick(&F64S);
    s.call("norm", || format!("{d}, {p}, {dims:?}"), || t.norm(p, dims.clone(), keep));
    s.call("logsumexp", || format!("{d}, {dims:?}"), || t.logsumexp(dims.clone(), keep));
    s.call("amax", || format!("{d}, {dims:?}"), || t.amax(dims.clone(), keep));
    s.call("amin", || format!("{d}, {dims:?}"), || t.amin(dims.clone(), keep));
    s.call("all_dim", || format!("{d}, {dims:?}"), || t.all_dim(dims.clone(), keep));
    s.call("any_dim", || format!("{d}, {dims:?}"), || t.any_dim(dims.clone(), keep));
    s.call("nansum", || format!("{d}, {dims:?}"), || t.nansum(dims.clone(), keep));
    s.call("count_nonzero", || format!("{d}, {dims:?}"), || t.count_nonzero(dims.clone()));
    let to = rng.pick(&DType::ALL);
    s.call("sum_dtype", || format!("{d}, {dims:?}, {to:?}"), || t.sum_dtype(dims.clone(), keep, to));
    s.call("mean_dtype", || format!("{d}, {dims:?}, {to:?}"), || t.mean_dtype(dims.clone(), keep, to));
    s.call("max", || d.to_string(), || t.max());
    s.call("min", || d.to_string(), || t.min());
    s.call("argmax", || format!("{d}, Some({dim})"), || t.argmax(Some(dim), keep));
    s.call("argmin", || format!("{d}, None"), || t.argmin(None, keep));
    s.call("aminmax", || format!("{d}, Some({dim})"), || t.aminmax(Some(dim), keep));
    s.call("max_dim", || format!("{d}, {dim}"), || t.max_dim(dim, keep));
    s.call("median", || format!("{d}, {dim}"), || t.median(dim, keep));
    s.call("median_all", || d.to_string(), || t.median_all());
    s.call("mode", || format!("{d}, {dim}"), || t.mode(dim, keep));
    s.call("var_mean", || format!("{d}, {dims:?}, {corr}"), || t.var_mean(dims.clone(), corr, keep));
    s.call("cumsum", || format!("{d}, {dim}, {to:?}"), || t.cumsum(dim, Some(to)));
    s.call("cumprod", || format!("{d}, {dim}"), || t.cumprod(dim, None));
    s.call("logcumsumexp", || format!("{d}, {dim}"), || t.logcumsumexp(dim));
    s.call("cummax", || format!("{d}, {dim}"), || t.cummax(dim));
    s.call("softmax", || format!("{d}, {dim}, {to:?}"), || t.softmax(dim, Some(to)));
    s.call("log_softmax", || format!("{d}, {dim}"), || t.log_softmax(dim, None));
    s.call("sort", || format!("{d}, {dim}"), || t.sort(dim, keep));
    s.call("argsort", || format!("{d}, {dim}"), || t.argsort(dim, keep));
    s.call("msort", || d.to_string(), || t.msort());
    let k = rng.pick(&I64S);
    s.call("topk", || format!("{d}, {k}, {dim}"), || t.topk(k, dim, keep, true));
    s.call("kthvalue", || format!("{d}, {k}, {dim}"), || t.kthvalue(k, dim, keep));
    s.call("unique", || d.to_string(), || t.unique(true, true, true));
    s.call("unique_consecutive", || d.to_string(), || t.unique_consecutive(true, true));
    let q = rng.pick(&F64S);
    let interp = rng.pick(&["linear", "lower", "nearest", "nope"]);
    s.call(
        "quantile",
        || format!("{d}, {q}, Some({dim}), {interp}"),
        || t.quantile(q, Some(dim), keep, interp),
    );
    // histc/bincount/histogram: bin counts past any memory are refused by their byte size.
    let bins = rng.pick(&[0i64, -1, 5, i64::MAX, i64::MIN]);
    let (lo, hi) = (rng.pick(&F64S), rng.pick(&F64S));
    s.call("histc", || format!("{d}, {bins}, {lo}, {hi}"), || t.histc(bins, lo, hi));
    s.call(
        "histogram",
        || format!("{d}, {bins}, ({lo}, {hi})"),
        || t.histogram(bins, Some((lo, hi)), None, false),
    );
    let minl = rng.pick(&[-1i64, 0, 3, i64::MAX]);
    s.call("bincount", || format!("{d}, None, {minl}"), || t.bincount(None, minl));
    let n = rng.pick(&I64S);
    s.call("diff", || format!("{d}, {n}, {dim}"), || t.diff(n, dim, None, None));
    s.call("trapz", || format!("{d}, {dim}"), || t.trapz(dim));
    s.call("cov", || format!("{d}, {n}"), || t.cov(n, None, None));
    s.call("corrcoef", || d.to_string(), || t.corrcoef());
    s.call("trace", || d.to_string(), || t.trace());
    s.call("glu", || format!("{d}, {dim}"), || t.glu(dim));
    s.call("item", || d.to_string(), || t.item::<f64>());
    s.call("is_nonzero", || d.to_string(), || t.is_nonzero());
    s.call("nonzero", || d.to_string(), || t.nonzero());
    s.call("argwhere", || d.to_string(), || t.argwhere());
    let ns = rng.pick(&[-1i64, 0, 3, i64::MIN]);
    s.call("nonzero_static", || format!("{d}, {ns}, -1"), || t.nonzero_static(ns, -1));
    let r = rng.pick(&[-1i64, 0, 2, i64::MAX, i64::MIN]);
    if r <= 3 || t.numel() <= 1 {
        s.call("combinations", || format!("{d}, {r}"), || t.combinations(r, false));
    }
}

/// Elementwise ops and conversions with NaN/inf and bad modes.
fn elementwise(s: &mut Sweep, rng: &mut Rng, x: &Input, y: &Input) {
    let (t, d, u, e) = (&x.t, x.desc.as_str(), &y.t, y.desc.as_str());
    for to in DType::ALL {
        s.call("to_dtype", || format!("{d} -> {to:?}"), || t.to_dtype(to));
    }
    s.call("add", || format!("{d}, {e}"), || t.add(u));
    s.call("div", || format!("{d}, {e}"), || t.div(u));
    let mode = rng.pick(&[Some("trunc"), Some("floor"), Some("bogus"), None]);
    s.call("div_rounding", || format!("{d}, {e}, {mode:?}"), || t.div_rounding(u, mode));
    s.call("floor_divide", || format!("{d}, 0"), || t.floor_divide(0i64));
    s.call("remainder", || format!("{d}, 0"), || t.remainder(0i64));
    s.call("fmod", || format!("{d}, {e}"), || t.fmod(u));
    s.call("pow", || format!("{d}, {e}"), || t.pow(u));
    let sh = rng.pick(&[-1i64, 64, i64::MAX, i64::MIN]);
    s.call("bitwise_left_shift", || format!("{d}, {sh}"), || t.bitwise_left_shift(sh));
    s.call("bitwise_right_shift", || format!("{d}, {sh}"), || t.bitwise_right_shift(sh));
    s.call("bitwise_and", || format!("{d}, {e}"), || t.bitwise_and(u));
    s.call("gcd", || format!("{d}, {e}"), || t.gcd(u));
    s.call("lcm", || format!("{d}, {e}"), || t.lcm(u));
    let v = rng.pick(&F64S);
    let lo = match rng.below(3) {
        0 => None,
        1 => Some(Operand::from(v)),
        _ => Some(Operand::from(u)),
    };
    s.call("clamp", || format!("{d}, {v}/{e}, None"), || t.clamp(lo, None));
    s.call("lerp", || format!("{d}, {e}, {v}"), || t.lerp(u, v));
    s.call("where_cond", || format!("{e}, {d}, {v}"), || Tensor::where_cond(u, t, v));
    s.call("isclose", || format!("{d}, {e}, {v}"), || t.isclose(u, v, v, true));
    s.call("nan_to_num", || format!("{d}, {v}"), || t.nan_to_num(Some(v), Some(v), Some(v)));
    let dec = rng.pick(&[i64::MAX, i64::MIN, 400, -400]);
    s.call("round_decimals", || format!("{d}, {dec}"), || t.round_decimals(dec));
    let gel = rng.pick(&["none", "tanh", "bogus"]);
    s.call("gelu", || format!("{d}, {gel:?}"), || t.gelu(gel));
    s.call("logit", || format!("{d}, {v}"), || t.logit(Some(v)));
    s.call("hardtanh", || format!("{d}, {v}, -1"), || t.hardtanh(v, -1.0));
    s.call("softplus", || format!("{d}, {v}, {v}"), || t.softplus(v, v));
    s.call("dropout", || format!("{d}, {v}"), || t.dropout(v, true));
    s.call("bernoulli_p", || format!("{d}, {v}"), || t.bernoulli_p(v));
    s.call("renorm", || format!("{d}, {v}, 0, {v}"), || t.renorm(v, 0, v));
    s.call("cdist", || format!("{d}, {e}, {v}"), || t.cdist(u, v));
    s.call("pdist", || format!("{d}, {v}"), || t.pdist(v));
    s.call("isin", || format!("{d}, {e}"), || t.isin(u, false));
    s.call("heaviside", || format!("{d}, {e}"), || t.heaviside(u));
    s.call("logaddexp", || format!("{d}, {e}"), || t.logaddexp(u));
    s.call("copy_", || format!("{d} <- {e}"), || t.copy_(u).map(|_| ()));
    s.call("fill_", || format!("{d}, {v}"), || t.fill_(v).map(|_| ()));
    s.call("fill_diagonal_", || format!("{d}, {v}"), || t.fill_diagonal_(v, true).map(|_| ()));
    s.call("add_", || format!("{d}, {e}"), || t.add_(u).map(|_| ()));
}

/// Indexing with out-of-range, negative, wrong-dtype and wrong-shape indices.
fn indexing(s: &mut Sweep, rng: &mut Rng, x: &Input, y: &Input) {
    let (t, d, src, e) = (&x.t, x.desc.as_str(), &y.t, y.desc.as_str());
    let ix = index(rng);
    let (idx, id) = (&ix.t, ix.desc.as_str());
    let mk = mask(rng);
    let (m, md) = (&mk.t, mk.desc.as_str());
    let dim = rng.pick(&DIMS);
    s.call("gather", || format!("{d}, {dim}, {id}"), || t.gather(dim, idx));
    s.call("scatter", || format!("{d}, {dim}, {id}, {e}"), || t.scatter(dim, idx, src));
    s.call("scatter_add", || format!("{d}, {dim}, {id}, {e}"), || t.scatter_add(dim, idx, src));
    s.call("scatter_value", || format!("{d}, {dim}, {id}, 1.5"), || t.scatter_value(dim, idx, 1.5));
    let red = rng.pick(&["sum", "prod", "mean", "amax", "amin", "bogus"]);
    s.call(
        "scatter_reduce",
        || format!("{d}, {dim}, {id}, {e}, {red}"),
        || t.scatter_reduce(dim, idx, src, red, true),
    );
    s.call("index_select", || format!("{d}, {dim}, {id}"), || t.index_select(dim, idx));
    s.call("index_add", || format!("{d}, {dim}, {id}, {e}"), || t.index_add(dim, idx, src, 2.0));
    s.call("index_copy", || format!("{d}, {dim}, {id}, {e}"), || t.index_copy(dim, idx, src));
    s.call("index_fill", || format!("{d}, {dim}, {id}"), || t.index_fill(dim, idx, f64::NAN));
    s.call(
        "index_reduce",
        || format!("{d}, {dim}, {id}, {e}, {red}"),
        || t.index_reduce(dim, idx, src, red, false),
    );
    s.call("take", || format!("{d}, {id}"), || t.take(idx));
    s.call("put", || format!("{d}, {id}, {e}"), || t.put(idx, src, true));
    s.call("take_along_dim", || format!("{d}, {id}, Some({dim})"), || t.take_along_dim(idx, Some(dim)));
    s.call("masked_fill", || format!("{d}, {md}"), || t.masked_fill(m, 1.0));
    s.call("masked_select", || format!("{d}, {md}"), || t.masked_select(m));
    s.call("masked_scatter", || format!("{d}, {md}, {e}"), || t.masked_scatter(m, src));
    s.call(
        "index_put_",
        || format!("{d}, [{id}], {e}"),
        || t.index_put_(vec![idx], src, rng_bool(1)).map(|_| ()),
    );
    let ip = vec![TensorIndex::from(idx), TensorIndex::from(m)];
    s.call("index_put_(2)", || format!("{d}, [{id}, {md}], 0"), || t.index_put_(ip, 0.0, false).map(|_| ()));
    let k = rng.pick(&[i64::MAX, i64::MIN, -1, 0, 5, 1 << 40]);
    let choices: Vec<Vec<TensorIndex>> = vec![
        vec![TensorIndex::from(k)],
        vec![TensorIndex::from(Ellipsis), TensorIndex::from(Ellipsis)],
        vec![TensorIndex::from(NewAxis); 70],
        vec![TensorIndex::from(0i64); 9],
        vec![TensorIndex::slice(isize::MIN..isize::MAX, 0)],
        vec![TensorIndex::slice(.., usize::MAX), TensorIndex::from(k)],
        vec![TensorIndex::from(idx), TensorIndex::from(Ellipsis), TensorIndex::from(m)],
        vec![TensorIndex::from(m), TensorIndex::from(m)],
    ];
    let which = rng.below(choices.len());
    let choice = choices.into_iter().nth(which).expect("a choice");
    s.call("i", || format!("{d}, choice {which} (k={k}, {id}, {md})"), || t.i(choice));
    s.call("i(tensor)", || format!("{d}, {id}"), || t.i(idx));
    let nc = rng.pick(&[-2i64, -1, 0, 3, i64::MAX]);
    s.call("one_hot", || format!("{id}, {nc}"), || idx.one_hot(nc));
    let pi = rng.pick(&[None, Some(i64::MIN), Some(i64::MAX), Some(-1)]);
    s.call("embedding", || format!("{id}, weight {d}, {pi:?}"), || idx.embedding(t, pi));
    s.call("bucketize", || format!("{d}, {e}"), || t.bucketize(src, false, false));
    let side = rng.pick(&[None, Some("left"), Some("right"), Some("middle")]);
    s.call("searchsorted", || format!("{d}, {e}, {side:?}"), || t.searchsorted(src, true, side, false));
    let (ssd, sst) = (rng.pick(&DIMS), rng.pick(&I64S));
    s.call("select_scatter", || format!("{d}, {e}, {ssd}, {sst}"), || t.select_scatter(src, ssd, sst));
    let (a, b, st) = (rng.pick(&I64S), rng.pick(&I64S), rng.pick(&I64S));
    s.call(
        "slice_scatter",
        || format!("{d}, {e}, {ssd}, {a}, {b}, {st}"),
        || t.slice_scatter(src, ssd, Some(a), Some(b), st),
    );
    s.call("diagonal_scatter", || format!("{d}, {e}, {ssd}"), || t.diagonal_scatter(src, ssd, 0, 1));
}

/// Matrix products, einsum and linalg with bad shapes, equations and dtypes.
fn matrices(s: &mut Sweep, rng: &mut Rng, x: &Input, y: &Input) {
    let (a, d, b, e) = (&x.t, x.desc.as_str(), &y.t, y.desc.as_str());
    s.call("matmul", || format!("{d}, {e}"), || a.matmul(b));
    s.call("mm", || format!("{d}, {e}"), || a.mm(b));
    s.call("bmm", || format!("{d}, {e}"), || a.bmm(b));
    s.call("dot", || format!("{d}, {e}"), || a.dot(b));
    s.call("mv", || format!("{d}, {e}"), || a.mv(b));
    s.call("outer", || format!("{d}, {e}"), || a.outer(b));
    s.call("kron", || format!("{d}, {e}"), || a.kron(b));
    s.call("inner", || format!("{d}, {e}"), || a.inner(b));
    let td = rng.pick(&DIMS);
    s.call("tensordot", || format!("{d}, {e}, {td}"), || a.tensordot(b, td));
    s.call("tensordot_dims", || format!("{d}, {e}, [{td}], [0, 1]"), || a.tensordot_dims(b, &[td], &[0, 1]));
    let eqs = [
        "ab,bc->ad",
        "a...b...",
        "ij,jk->ik",
        "αβ,βγ->αγ",
        "",
        "->",
        "a,b,c->abc",
        "ii->i",
        "ab->aab",
        "...,...->...",
        "ab,bc",
        "a-b",
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,a",
    ];
    let eq = rng.pick(&eqs);
    s.call("einsum", || format!("{eq:?}, [{d}, {e}]"), || Tensor::einsum(eq, &[a, b]));
    s.call("einsum(no operands)", || format!("{eq:?}, []"), || Tensor::einsum(eq, &[]));
    s.call("multi_dot", || format!("[{d}, {e}]"), || linalg::multi_dot(&[a, b]));
    s.call("multi_dot(empty)", || "[]".into(), || linalg::multi_dot(&[]));
    s.call("inv", || d.to_string(), || linalg::inv(a));
    s.call("det", || d.to_string(), || linalg::det(a));
    s.call("slogdet", || d.to_string(), || linalg::slogdet(a));
    s.call("solve", || format!("{d}, {e}"), || linalg::solve(a, b, true));
    s.call("cholesky", || d.to_string(), || linalg::cholesky(a, false));
    let qm = rng.pick(&["reduced", "complete", "r", "bogus"]);
    s.call("qr", || format!("{d}, {qm}"), || linalg::qr(a, qm));
    s.call("svd", || d.to_string(), || linalg::svd(a, true));
    s.call("svdvals", || d.to_string(), || linalg::svdvals(a));
    let uplo = rng.pick(&["L", "U", "X", ""]);
    s.call("eigh", || format!("{d}, {uplo:?}"), || linalg::eigh(a, uplo));
    let n = rng.pick(&[0i64, -1, 3, i64::MAX, i64::MIN]);
    // Squaring loops: at most 64 rounds, but on a second thread in case of a hang.
    if let Ok(Ok(vals)) = quietly(|| catch_unwind(AssertUnwindSafe(|| a.to_f64_vec()))) {
        let (dims, dt) = (a.dims().to_vec(), a.dtype());
        s.timed("matrix_power", format!("{d}, {n}"), move || {
            let t = Tensor::from_vec(vals, dims)?.to_dtype(dt)?;
            linalg::matrix_power(&t, n).map(|_| ())
        });
    }
    s.call("pinv", || d.to_string(), || linalg::pinv(a, None, None, false));
    s.call("matrix_rank", || d.to_string(), || linalg::matrix_rank(a, Some(f64::NAN), None, false));
    let drv = rng.pick(&[None, Some("gelsd"), Some("bogus")]);
    s.call("lstsq", || format!("{d}, {e}, {drv:?}"), || linalg::lstsq(a, b, None, drv));
    let ord = rng.pick(&F64S);
    let nd = rng.pick(&[vec![0isize, 0], vec![isize::MAX], vec![-1]]);
    s.call(
        "vector_norm",
        || format!("{d}, {ord}, {nd:?}"),
        || linalg::vector_norm(a, ord, nd.clone(), false, None),
    );
    let mo = rng.pick(&["fro", "nuc", "bogus"]);
    s.call(
        "matrix_norm",
        || format!("{d}, {mo}, {nd:?}"),
        || linalg::matrix_norm(a, mo, nd.clone(), false, None),
    );
    s.call("cross", || format!("{d}, {e}, {td}"), || linalg::cross(a, b, td));
    s.call("vecdot", || format!("{d}, {e}, {td}"), || linalg::vecdot(a, b, td));
    s.call("matrix_exp", || d.to_string(), || linalg::matrix_exp(a));
    s.call("solve_triangular", || format!("{d}, {e}"), || linalg::solve_triangular(a, b, true, true, false));
    s.call("lu_factor", || d.to_string(), || linalg::lu_factor(a));
    s.call("cond", || d.to_string(), || linalg::cond(a, None));
}

/// Convolution, pooling, interpolation and normalisation with bad hyperparameters.
fn nn_ops(s: &mut Sweep, rng: &mut Rng, x: &Input, y: &Input) {
    let (a, d, w, e) = (&x.t, x.desc.as_str(), &y.t, y.desc.as_str());
    let hyper = [0usize, 1, 2, 3, usize::MAX, usize::MAX / 2];
    let (st, pd, dl) =
        (rng.pick(&hyper), rng.pick(&[0usize, 1, usize::MAX / 2, usize::MAX]), rng.pick(&hyper));
    let groups = rng.pick(&[0usize, 1, 2, 3, usize::MAX]);
    // A well-formed 4-d input and weight, so the hyperparameters are what is tested.
    let img = Tensor::ones([1, 2, 4, 4], DType::F32).expect("an image");
    let ker = Tensor::ones([2, 1, 3, 3], DType::F32).expect("a kernel");
    let hp = || format!("stride {st}, padding {pd}, dilation {dl}, groups {groups}");
    s.call("conv2d", hp, || {
        img.conv2d(&ker, None, &[st, st], Padding::Explicit(vec![pd, pd]), &[dl, dl], groups)
    });
    s.call(
        "conv2d(random)",
        || format!("{d}, {e}"),
        || a.conv2d(w, None, &[1, 1], Padding::Explicit(vec![0, 0]), &[1, 1], 1),
    );
    s.call(
        "conv1d",
        || format!("{d}, {e}, {st}"),
        || a.conv1d(w, None, &[st], Padding::Explicit(vec![0]), &[1], 1),
    );
    s.call(
        "conv2d(bad arrays)",
        || "stride [], dilation [1, 1, 1]".into(),
        || img.conv2d(&ker, None, &[], Padding::Explicit(vec![]), &[1, 1, 1], 1),
    );
    s.call("conv_transpose2d", hp, || {
        img.conv_transpose2d(&ker, None, &[st, st], &[pd, pd], &[st, st], groups, &[dl, dl])
    });
    let k = rng.pick(&[0usize, 1, 3, 5, usize::MAX]);
    let kp = || format!("kernel {k}, stride {st}, padding {pd}, dilation {dl}");
    s.call("max_pool2d", kp, || img.max_pool2d(&[k, k], Some(&[st, st][..]), &[pd, pd], &[dl, dl], true));
    s.call("max_pool2d(random)", || d.to_string(), || a.max_pool2d(&[2, 2], None, &[0, 0], &[1, 1], false));
    let div = rng.pick(&[None, Some(0i64), Some(-1), Some(i64::MIN)]);
    s.call(
        "avg_pool2d",
        || format!("kernel {k}, stride {st}, padding {pd}, {div:?}"),
        || img.avg_pool2d(&[k, k], Some(&[st, st][..]), &[pd, pd], false, true, div),
    );
    let os = rng.pick(&[vec![0usize, 0], vec![usize::MAX, usize::MAX], vec![2], vec![1 << 62, 4]]);
    s.call("adaptive_avg_pool2d", || format!("{os:?}"), || img.adaptive_avg_pool2d(&os));
    s.call("adaptive_max_pool2d", || format!("{os:?}"), || img.adaptive_max_pool2d(&os));
    s.call("adaptive_avg_pool1d(random)", || format!("{d}, {k}"), || a.adaptive_avg_pool1d(k.min(4)));
    let size = rng.pick(&[None, Some(vec![usize::MAX, usize::MAX]), Some(vec![0, 0]), Some(vec![3])]);
    let scale = rng.pick(&[None, Some(vec![f64::NAN, 1.0]), Some(vec![-1.0, 2.0]), Some(vec![0.0, 0.0])]);
    let mode = rng.pick(&["nearest", "bilinear", "bicubic", "area", "trilinear", "bogus"]);
    let ac = rng.pick(&[None, Some(true), Some(false)]);
    s.call(
        "interpolate",
        || format!("{size:?}, {scale:?}, {mode}, {ac:?}"),
        || img.interpolate(size.as_deref(), scale.as_deref(), mode, ac),
    );
    s.call("im2col", kp, || img.im2col(&[k, k], &[dl, dl], &[pd, pd], &[st, st]));
    let cols = Tensor::ones([1, 18, 4], DType::F32).expect("columns");
    s.call("col2im", kp, || cols.col2im(&[4, 4], &[k, k], &[dl, dl], &[pd, pd], &[st, st]));
    let ns = rng.pick(&[vec![], vec![usize::MAX], vec![4, 4, 4, 4, 4], vec![0]]);
    let eps = rng.pick(&F64S);
    s.call("layer_norm", || format!("{d}, {ns:?}, {eps}"), || a.layer_norm(&ns, None, None, eps));
    s.call("group_norm", || format!("groups {groups}, {eps}"), || img.group_norm(groups, None, None, eps));
    s.call("group_norm(random)", || format!("{d}, 2"), || a.group_norm(2, None, None, 1e-5));
}

/// Calls whose bad arguments could spin a loop for a long time run on a thread with a timeout.
fn loops(s: &mut Sweep, rng: &mut Rng) {
    let p = rng.pick(&[i64::MAX, i64::MIN, 0, -1, 1 << 40]);
    s.timed("mvlgamma", format!("F64[3], {p}"), move || {
        Tensor::ones([3], DType::F64)?.mul(5.0)?.mvlgamma(p).map(|_| ())
    });
    s.timed("polygamma", format!("F64[3], {p}"), move || {
        Tensor::ones([3], DType::F64)?.polygamma(p).map(|_| ())
    });
    s.timed("diff(n huge)", format!("F32[5], {p}"), move || {
        Tensor::ones([5], DType::F32)?.diff(p, 0, None, None).map(|_| ())
    });
    s.timed("matrix_power(huge n)", format!("F64[2, 2], {p}"), move || {
        linalg::matrix_power(&Tensor::eye(2, None, DType::F64)?, p).map(|_| ())
    });
    s.timed("rot90(huge k)", format!("F32[2, 2], {p}"), move || {
        Tensor::ones([2, 2], DType::F32)?.rot90(p, [0isize, 1]).map(|_| ())
    });
    s.timed("combinations(r huge)", format!("F32[4], {p}"), move || {
        Tensor::ones([4], DType::F32)?.combinations(p, false).map(|_| ())
    });
    s.timed("round_decimals(huge)", format!("F32[3], {p}"), move || {
        Tensor::ones([3], DType::F32)?.round_decimals(p).map(|_| ())
    });
}

#[test]
fn adversarial_arguments_never_panic() {
    let mut rng = Rng(0x5EED_0034);
    let mut s = Sweep::default();
    for _ in 0..24 {
        let (x, y) = (input(&mut rng), input(&mut rng));
        creation(&mut s, &mut rng);
        shape_ops(&mut s, &mut rng, &x, &y);
        reductions(&mut s, &mut rng, &x);
        elementwise(&mut s, &mut rng, &x, &y);
        indexing(&mut s, &mut rng, &x, &y);
        matrices(&mut s, &mut rng, &x, &y);
        nn_ops(&mut s, &mut rng, &x, &y);
    }
    for _ in 0..4 {
        loops(&mut s, &mut rng);
    }
    assert!(s.names.len() >= 120, "the sweep covers {} functions", s.names.len());
    s.finish("robustness sweep");
}

/// Sizes that fit `usize` but not any machine (terabytes to exabytes). A correct implementation
/// refuses them with an `Err` from a size check; one that reaches the allocator panics with an
/// out-of-memory message at best and aborts (or is OOM-killed) at worst.
#[test]
#[ignore = "relies on the kernel refusing to reserve terabytes (vm.overcommit_memory 0 or 2); passes here"]
fn huge_allocations_are_refused() {
    let mut s = Sweep::default();
    let big = 1usize << 40;
    s.call("zeros", || "[1 << 40]".into(), || Tensor::zeros([big], DType::F32));
    s.call("zeros(2^62 bytes)", || "[1 << 61, 2]".into(), || Tensor::zeros([1usize << 61, 2], DType::F32));
    s.call(
        "full",
        || "[1 << 20, 1 << 20], 1".into(),
        || Tensor::full([1usize << 20, 1 << 20], 1.0, DType::F64),
    );
    s.call("randn", || "[1 << 40]".into(), || Tensor::randn([big], DType::F32));
    s.call("rand", || "[1 << 40]".into(), || Tensor::rand([big], DType::F32));
    s.call("randint", || "[1 << 40]".into(), || Tensor::randint(0, 5, [big], DType::I64));
    s.call("linspace", || "0, 1, 1 << 40".into(), || Tensor::linspace(0.0, 1.0, big, DType::F32));
    s.call("logspace", || "0, 1, 1 << 40".into(), || Tensor::logspace(0.0, 1.0, big, 10.0, DType::F32));
    s.call("arange(i64)", || "0, 1 << 40".into(), || Tensor::arange(1i64 << 40, DType::I64));
    s.call("arange(tiny step)", || "0, 1, 1e-12".into(), || Tensor::arange_step(0.0, 1.0, 1e-12, DType::F32));
    s.call("eye", || "1 << 31".into(), || Tensor::eye(1 << 31, None, DType::F32));
    s.call("empty_strided", || "[1 << 40], [1]".into(), || Tensor::empty_strided(&[big], &[1], DType::U8));
    s.call("hann_window", || "1 << 40".into(), || Tensor::hann_window(1 << 40, true, DType::F32));
    s.call(
        "tril_indices",
        || "1 << 31, 1 << 31, 0".into(),
        || Tensor::tril_indices(1 << 31, 1 << 31, 0, Device::Cpu),
    );
    s.call(
        "tril_indices(max)",
        || "i64::MAX, i64::MAX, 0".into(),
        || Tensor::tril_indices(i64::MAX, i64::MAX, 0, Device::Cpu),
    );
    s.call(
        "bool full(isize::MAX)",
        || "[isize::MAX as usize]".into(),
        || Tensor::full([isize::MAX as usize], true, DType::Bool),
    );
    let t = Tensor::ones([2, 3], DType::F32).expect("an input");
    s.call("repeat", || "[2, 3], [1 << 20, 1 << 20]".into(), || t.repeat([1isize << 20, 1 << 20]));
    s.call(
        "expand+contiguous",
        || "[2, 3] -> [1 << 40, 2, 3]".into(),
        || t.expand([1isize << 40, 2, 3])?.contiguous(),
    );
    s.call("pad", || "[2, 3], [1 << 40, 0]".into(), || t.pad(&[1 << 40, 0], "constant", None));
    s.call("repeat_interleave", || "[2, 3], 1 << 40".into(), || t.repeat_interleave(1 << 40, None));
    s.call("new_zeros", || "[1 << 40]".into(), || t.new_zeros([big]));
    let img = Tensor::ones([1, 1, 4, 4], DType::F32).expect("an image");
    s.call(
        "interpolate(scale)",
        || "scale 1e12".into(),
        || img.interpolate(None, Some(&[1e12, 1e12][..]), "nearest", None),
    );
    s.call(
        "interpolate(inf)",
        || "scale inf".into(),
        || img.interpolate(None, Some(&[f64::INFINITY, 1.0][..]), "nearest", None),
    );
    s.call(
        "interpolate(size)",
        || "size [1 << 20, 1 << 20]".into(),
        || img.interpolate(Some(&[1 << 20, 1 << 20][..]), None, "nearest", None),
    );
    let ker = Tensor::ones([1, 1, 1, 1], DType::F32).expect("a kernel");
    s.call(
        "conv2d(padding)",
        || "padding [1 << 20, 1 << 20]".into(),
        || img.conv2d(&ker, None, &[1, 1], Padding::Explicit(vec![1 << 20, 1 << 20]), &[1, 1], 1),
    );
    s.call(
        "max_pool2d(padding)",
        || "kernel [1 << 21], padding [1 << 20]".into(),
        || img.max_pool2d(&[1 << 21, 1 << 21], Some(&[1, 1][..]), &[1 << 20, 1 << 20], &[1, 1], false),
    );
    let v = Tensor::from_vec(vec![1i64 << 40], [1]).expect("a value");
    s.call("bincount", || "[1 << 40]".into(), || v.bincount(None, 0));
    s.call("bincount(minlength)", || "[], 1 << 40".into(), || v.bincount(None, 1 << 40));
    s.call("one_hot", || "[1 << 40], -1".into(), || v.one_hot(-1));
    s.call("one_hot(classes)", || "[1 << 40], 1 << 40".into(), || v.one_hot(1 << 40));
    s.call("histc", || "bins 1 << 40".into(), || t.histc(1 << 40, 0.0, 1.0));
    s.call("nonzero_static", || "size 1 << 40".into(), || t.nonzero_static(1 << 40, 0));
    s.call("unique(bins)", || "[1 << 40] values".into(), || v.unique(true, true, true));
    s.finish("robustness huge allocations");
}

/// `tril_indices`/`triu_indices` count their pairs in closed form before visiting only the rows
/// that hold some (so a huge `row` with a far offset returns at once): the counts torch gives.
#[test]
fn triangle_index_counts_match_torch() {
    let cases: [(i64, i64, i64, usize, usize); 9] = [
        (3, 4, 0, 6, 9),
        (4, 3, -1, 6, 9),
        (5, 5, 2, 22, 6),
        (0, 3, 0, 0, 0),
        (3, 0, 0, 0, 0),
        (4, 6, -7, 0, 24),
        (4, 6, 9, 24, 0),
        (6, 2, 1, 12, 1),
        (i64::MAX, 2, i64::MIN, 0, 0),
    ];
    for (r, c, o, tril, triu) in cases.iter().take(8) {
        let got = Tensor::tril_indices(*r, *c, *o, Device::Cpu).unwrap();
        assert_eq!(got.dims(), [2, *tril], "tril_indices({r}, {c}, {o})");
        let got = Tensor::triu_indices(*r, *c, *o, Device::Cpu).unwrap();
        assert_eq!(got.dims(), [2, *triu], "triu_indices({r}, {c}, {o})");
    }
    // A huge matrix: a far offset leaves no entries, the upper triangle of two columns holds
    // three, and the lower one more than can be allocated (refused before any row is visited).
    let (r, c, o, _, _) = cases[8];
    assert_eq!(Tensor::tril_indices(r, c, o, Device::Cpu).unwrap().dims(), [2, 0]);
    assert_eq!(Tensor::triu_indices(r, c, 0, Device::Cpu).unwrap().dims(), [2, 3]);
    assert!(Tensor::tril_indices(r, c, 0, Device::Cpu).is_err());
}
