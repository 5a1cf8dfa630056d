//! Golden tests of the nn kernels and linear algebra against torch, for every dtype.
//!
//! `tests/golden/nn.safetensors` is written by `tests/golden/make_golden_nn.py` (see its docstring for
//! the case layout: inputs by role, the op's arguments under "args", optional views, `error` cases).
//! Every case runs; failures are collected and reported together.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{
    case_inputs, compare, panic_message, quietly, strided_view, tensor_of, tolerance, Golden, Json,
};
use oxtorch_tensor::{Padding, Result, Scalar, Tensor};
use safetensors::SafeTensors;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/nn.safetensors");

/// The fewest cases the file may hold; guards against a truncated file or a metadata mix-up.
const MIN_CASES: usize = 750;

/// Error cases whose message is exactly torch's.
static SAME_MESSAGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The fewest error cases that must reproduce torch's message word for word.
const MIN_SAME_MESSAGE: usize = 190;

/// The arguments of one case.
struct Args<'a>(&'a Json);

impl Args<'_> {
    fn get(&self, key: &str) -> Option<&Json> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn usizes(&self, key: &str, default: &[usize]) -> Vec<usize> {
        match self.get(key) {
            None => default.to_vec(),
            Some(Json::Arr(a)) => a.iter().map(|v| v.as_i64().expect("an int") as usize).collect(),
            Some(v) => vec![v.as_i64().expect("an int") as usize],
        }
    }

    fn opt_usizes(&self, key: &str) -> Option<Vec<usize>> {
        self.get(key).map(|_| self.usizes(key, &[]))
    }

    fn f64s(&self, key: &str) -> Option<Vec<f64>> {
        self.get(key).map(|v| match v {
            Json::Arr(a) => a.iter().map(|v| v.as_f64().expect("a number")).collect(),
            v => vec![v.as_f64().expect("a number")],
        })
    }

    fn int(&self, key: &str, default: i64) -> i64 {
        self.get(key).map_or(default, |v| v.as_i64().expect("an int"))
    }

    fn isizes(&self, key: &str) -> Vec<isize> {
        self.get(key)
            .and_then(Json::as_arr)
            .map(|a| a.iter().map(|v| v.as_i64().expect("an int") as isize).collect())
            .unwrap_or_default()
    }

    fn float(&self, key: &str, default: f64) -> f64 {
        self.get(key).map_or(default, |v| v.as_f64().expect("a number"))
    }

    fn opt_float(&self, key: &str) -> Option<f64> {
        self.get(key).map(|v| v.as_f64().expect("a number"))
    }

    fn flag(&self, key: &str) -> bool {
        self.get(key).and_then(Json::as_bool).unwrap_or(false)
    }

    fn opt_flag(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Json::as_bool)
    }

    fn str(&self, key: &str, default: &'static str) -> String {
        self.get(key).and_then(Json::as_str).unwrap_or(default).to_string()
    }

    /// A Python number keeping its type (`2` is an int, `2.0` a float).
    fn scalar(&self, key: &str) -> Scalar {
        match self.get(key) {
            Some(Json::Num(n)) if n.contains(['.', 'e', 'E']) => Scalar::Float(n.parse().expect("a float")),
            Some(Json::Num(n)) => Scalar::Int(n.parse().expect("an int")),
            _ => Scalar::Int(1),
        }
    }

    fn padding(&self) -> Padding {
        match self.get("padding") {
            Some(Json::Str(s)) if s == "same" => Padding::Same,
            Some(Json::Str(_)) => Padding::Valid,
            _ => Padding::Explicit(self.usizes("padding", &[0])),
        }
    }
}

/// The inputs of one case by role.
struct Inputs {
    roles: Vec<String>,
    tensors: Vec<Tensor>,
}

impl Inputs {
    fn opt(&self, role: &str) -> Option<&Tensor> {
        self.roles.iter().position(|r| r == role).map(|i| &self.tensors[i])
    }

    fn get(&self, role: &str) -> &Tensor {
        self.opt(role).unwrap_or_else(|| panic!("no input with role {role}"))
    }
}

fn run_op(op: &str, a: &Args<'_>, x: &Inputs) -> Result<Vec<Tensor>> {
    let one = |t: Result<Tensor>| t.map(|t| vec![t]);
    let two = |t: Result<(Tensor, Tensor)>| t.map(|(a, b)| vec![a, b]);
    let (stride, dilation) = (a.usizes("stride", &[1]), a.usizes("dilation", &[1]));
    let pool_stride = a.opt_usizes("stride");
    match op {
        "mm" => one(x.get("a").mm(x.get("b"))),
        "bmm" => one(x.get("a").bmm(x.get("b"))),
        "dot" => one(x.get("a").dot(x.get("b"))),
        "vdot" => one(x.get("a").vdot(x.get("b"))),
        "outer" => one(x.get("a").outer(x.get("b"))),
        "kron" => one(x.get("a").kron(x.get("b"))),
        "tensordot" => one(x.get("a").tensordot(x.get("b"), a.int("dims", 2) as isize)),
        "tensordot_dims" => one(x.get("a").tensordot_dims(x.get("b"), &a.isizes("da"), &a.isizes("db"))),
        "einsum" => {
            let ops: Vec<&Tensor> = x.tensors.iter().collect();
            one(Tensor::einsum(&a.str("eq", ""), &ops))
        }
        "addmm" => one(x.get("x").addmm(x.get("a"), x.get("b"), a.scalar("beta"), a.scalar("alpha"))),
        "baddbmm" => one(x.get("x").baddbmm(x.get("a"), x.get("b"), a.scalar("beta"), a.scalar("alpha"))),
        "addmv" => one(x.get("x").addmv(x.get("a"), x.get("b"), a.scalar("beta"), a.scalar("alpha"))),
        "addr" => one(x.get("x").addr(x.get("a"), x.get("b"), a.scalar("beta"), a.scalar("alpha"))),
        "linear" => one(x.get("x").linear(x.get("weight"), x.opt("bias"))),
        "conv1d" | "conv2d" | "conv3d" => {
            let n = (op.as_bytes()[4] - b'0') as usize;
            one(x.get("x").conv_nd(
                n,
                x.get("weight"),
                x.opt("bias"),
                &stride,
                a.padding(),
                &dilation,
                a.int("groups", 1) as usize,
            ))
        }
        "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d" => {
            let n = (op.as_bytes()[14] - b'0') as usize;
            one(x.get("x").conv_transpose_nd(
                n,
                x.get("weight"),
                x.opt("bias"),
                &stride,
                &a.usizes("padding", &[0]),
                &a.usizes("output_padding", &[0]),
                a.int("groups", 1) as usize,
                &dilation,
            ))
        }
        "max_pool1d_with_indices" | "max_pool2d_with_indices" | "max_pool3d_with_indices" => {
            let n = (op.as_bytes()[8] - b'0') as usize;
            two(x.get("x").max_pool_nd_with_indices(
                n,
                &a.usizes("kernel_size", &[]),
                pool_stride.as_deref(),
                &a.usizes("padding", &[0]),
                &dilation,
                a.flag("ceil_mode"),
            ))
        }
        "avg_pool1d" | "avg_pool2d" | "avg_pool3d" => {
            let n = (op.as_bytes()[8] - b'0') as usize;
            one(x.get("x").avg_pool_nd(
                n,
                &a.usizes("kernel_size", &[]),
                pool_stride.as_deref(),
                &a.usizes("padding", &[0]),
                a.flag("ceil_mode"),
                a.opt_flag("count_include_pad").unwrap_or(true),
                a.get("divisor_override").map(|v| v.as_i64().expect("an int")),
            ))
        }
        "adaptive_avg_pool1d" => one(x.get("x").adaptive_avg_pool_nd(1, &a.usizes("output_size", &[]))),
        "adaptive_avg_pool2d" => one(x.get("x").adaptive_avg_pool_nd(2, &a.usizes("output_size", &[]))),
        "adaptive_avg_pool3d" => one(x.get("x").adaptive_avg_pool_nd(3, &a.usizes("output_size", &[]))),
        "adaptive_max_pool3d_with_indices" => {
            two(x.get("x").adaptive_max_pool_nd_with_indices(3, &a.usizes("output_size", &[])))
        }
        "adaptive_max_pool1d_with_indices" => {
            two(x.get("x").adaptive_max_pool_nd_with_indices(1, &a.usizes("output_size", &[])))
        }
        "adaptive_max_pool2d_with_indices" => {
            two(x.get("x").adaptive_max_pool_nd_with_indices(2, &a.usizes("output_size", &[])))
        }
        "interpolate" => {
            let size = a.opt_usizes("size");
            let scale = a.f64s("scale_factor");
            one(x.get("x").interpolate(
                size.as_deref(),
                scale.as_deref(),
                &a.str("mode", "nearest"),
                a.opt_flag("align_corners"),
            ))
        }
        "layer_norm" => one(x.get("x").layer_norm(
            &a.usizes("normalized_shape", &[]),
            x.opt("weight"),
            x.opt("bias"),
            a.float("eps", 1e-5),
        )),
        "rms_norm" => {
            one(x.get("x").rms_norm(&a.usizes("normalized_shape", &[]), x.opt("weight"), a.opt_float("eps")))
        }
        "group_norm" => one(x.get("x").group_norm(
            a.int("num_groups", 1) as usize,
            x.opt("weight"),
            x.opt("bias"),
            a.float("eps", 1e-5),
        )),
        "batch_norm" => {
            // The running stats are updated in place: return them too (torch's case stores them).
            let (rm, rv) = (
                x.opt("running_mean").map(Tensor::copy).transpose()?,
                x.opt("running_var").map(Tensor::copy).transpose()?,
            );
            let training = a.flag("training");
            let y = x.get("x").batch_norm(
                rm.as_ref(),
                rv.as_ref(),
                x.opt("weight"),
                x.opt("bias"),
                training,
                a.float("momentum", 0.1),
                a.float("eps", 1e-5),
            )?;
            let mut outs = vec![y];
            if training {
                outs.extend(rm.into_iter().chain(rv));
            }
            Ok(outs)
        }
        "sdpa" => one(x.get("q").scaled_dot_product_attention(
            x.get("k"),
            x.get("v"),
            x.opt("attn_mask"),
            0.0,
            a.flag("is_causal"),
            a.opt_float("scale"),
            a.flag("enable_gqa"),
        )),
        "embedding" => {
            one(x.get("x").embedding(x.get("weight"), a.get("padding_idx").and_then(Json::as_i64)))
        }
        "one_hot" => one(x.get("x").one_hot(a.int("num_classes", -1))),
        "cross_entropy" => one(x.get("x").cross_entropy(
            x.get("target"),
            x.opt("weight"),
            a.int("ignore_index", -100),
            &a.str("reduction", "mean"),
            a.float("label_smoothing", 0.0),
        )),
        "nll_loss" => one(x.get("x").nll_loss(
            x.get("target"),
            x.opt("weight"),
            a.int("ignore_index", -100),
            &a.str("reduction", "mean"),
        )),
        other => panic!("unknown op {other}"),
    }
}

fn check_case(st: &SafeTensors<'_>, name: &str, meta: &Json) -> std::result::Result<(), String> {
    let n_in = meta.get("n_in").and_then(Json::as_i64).expect("n_in") as usize;
    let roles: Vec<String> = meta
        .get("roles")
        .and_then(Json::as_arr)
        .expect("roles")
        .iter()
        .map(|r| r.as_str().expect("a role").to_string())
        .collect();
    let tensors = case_inputs(st, name, meta, n_in, strided_view)?;
    let inputs = Inputs { roles, tensors };
    let op = meta.get("op").and_then(Json::as_str).expect("op");
    let args = Args(meta.get("args").expect("args"));
    let result = catch_unwind(AssertUnwindSafe(|| run_op(op, &args, &inputs)))
        .map_err(|p| format!("panicked: {}", panic_message(&*p)))?;
    if meta.get("error").and_then(Json::as_bool).unwrap_or(false) {
        return match result {
            Err(e) => {
                let want = meta.get("message").and_then(Json::as_str).unwrap_or("");
                let same = e.to_string() == want;
                if std::env::var_os("GOLDEN_VERBOSE").is_some() && !same {
                    println!("  {name}: message differs:\n    torch:   {want}\n    oxtorch: {e}");
                }
                SAME_MESSAGE.fetch_add(usize::from(same), std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
            Ok(outs) => Err(format!(
                "torch raises, oxtorch returns Ok ({:?})",
                outs.iter().map(|t| (t.dtype().name(), t.dims().to_vec())).collect::<Vec<_>>()
            )),
        };
    }
    let outs = result.map_err(|e| format!("torch succeeds, oxtorch returns Err: {e}"))?;
    for (i, got) in outs.iter().enumerate() {
        let key = if i == 0 { format!("{name}.out") } else { format!("{name}.out{i}") };
        let want = tensor_of(&st.tensor(&key).map_err(|e| format!("missing output {key}: {e}"))?);
        let (mut rtol, mut atol) = tolerance(want.dtype());
        if let Some(r) = meta.get("rtol").and_then(Json::as_f64) {
            rtol = r;
        }
        if let Some(a) = meta.get("atol").and_then(Json::as_f64) {
            atol = a;
        }
        compare(got, &want, rtol, atol).map_err(|e| format!("output {i}: {e}"))?;
    }
    if st.tensor(&format!("{name}.out{}", outs.len())).is_ok() {
        return Err(format!("torch gives more than {} outputs", outs.len()));
    }
    Ok(())
}

#[test]
fn golden_nn_matches_torch() {
    let golden = Golden::read(GOLDEN, "tests/golden/make_golden_nn.py", MIN_CASES);
    let (st, cases) = (golden.tensors(), golden.cases());
    let results: Vec<(&str, bool, std::result::Result<(), String>)> = quietly(|| {
        cases
            .iter()
            .map(|(name, meta)| {
                let err = meta.get("error").and_then(Json::as_bool).unwrap_or(false);
                let outcome = catch_unwind(AssertUnwindSafe(|| check_case(&st, name, meta)))
                    .unwrap_or_else(|p| Err(format!("panicked: {}", panic_message(&*p))));
                (*name, err, outcome)
            })
            .collect()
    });
    let passed = results.iter().filter(|r| r.2.is_ok()).count();
    let errors = results.iter().filter(|r| r.2.is_ok() && r.1).count();
    let failures: Vec<String> =
        results.iter().filter_map(|(n, _, r)| r.as_ref().err().map(|e| format!("{n}: {e}"))).collect();
    println!(
        "golden nn: {} cases, {passed} passed ({errors} error cases), {} failed",
        results.len(),
        failures.len()
    );
    for f in &failures {
        println!("  FAILED {f}");
    }
    assert!(passed >= MIN_CASES, "only {passed} cases passed; the test must not pass vacuously");
    assert!(errors >= 150, "only {errors} error cases passed");
    let same = SAME_MESSAGE.load(std::sync::atomic::Ordering::Relaxed);
    println!("golden nn: {same} of {errors} error messages are torch's word for word");
    assert!(same >= MIN_SAME_MESSAGE, "only {same} error messages match torch's");
    assert!(failures.is_empty(), "{} golden nn cases differ from torch (listed above)", failures.len());
}

#[test]
fn embedding_in_range_equals_embedding_and_the_cpu_still_rejects_an_id_out_of_range() -> Result<()> {
    let weight = Tensor::from_vec((0..40).map(|v| v as f32 * 0.5 - 3.0).collect::<Vec<_>>(), [10, 4])?;
    for ids in [
        Tensor::from_vec(vec![3i64, 0, 9, 3], [2, 2])?,
        Tensor::from_vec(vec![7i32, 1], [2])?,
        Tensor::from_vec(vec![0i64, 1, 2, 3, 4, 5], [2, 3])?.transpose(0, 1)?,
    ] {
        let (fast, checked) = (ids.embedding_in_range(&weight)?, ids.embedding(&weight, None)?);
        assert_eq!(fast.dims(), checked.dims());
        assert_eq!(fast.contiguous()?.to_vec::<f32>()?, checked.contiguous()?.to_vec::<f32>()?);
    }
    for bad in [10i64, -1] {
        let err = Tensor::from_vec(vec![bad], [1])?.embedding_in_range(&weight).unwrap_err();
        assert!(err.to_string().contains("index out of range"), "{err}");
    }
    Ok(())
}
