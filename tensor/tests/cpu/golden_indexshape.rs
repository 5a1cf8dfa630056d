//! Golden tests of the indexing and shape-op family against torch, for every dtype.
//!
//! `tests/golden/indexshape.safetensors` holds inputs, torch's outputs and a JSON description per
//! case, written by `tests/golden/make_golden_indexshape.py` (see its docstring for the format).
//! Error cases (torch raises) must fail in oxtorch too, and with torch's message unless the case is
//! listed in [`MESSAGE_DIFFS`]. Ops that torch answers with views must answer with views here
//! (sharing the input's storage), and copies where torch copies.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{compare, panic_message, quietly, tensor_of, tolerance, Golden, Json};
use oxtorch_tensor::{Result, Scalar, Tensor, TensorIndex};
use safetensors::SafeTensors;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/indexshape.safetensors");

/// The fewest cases the file may hold; guards against a truncated file or a metadata mix-up.
const MIN_CASES: usize = 1530;

/// Error cases whose oxtorch message differs from torch's (the failure itself is still required).
const MESSAGE_DIFFS: &[&str] = &[
    // torch prints the offending tensor's values into the message.
    "meshgrid_2d",
];

fn arg<'a>(meta: &'a Json, key: &str) -> &'a Json {
    meta.get("args").and_then(|a| a.get(key)).unwrap_or_else(|| panic!("args lack '{key}'"))
}

fn arg_i(meta: &Json, key: &str) -> i64 {
    arg(meta, key).as_i64().unwrap_or_else(|| panic!("'{key}' is not an integer"))
}

fn arg_opt_i(meta: &Json, key: &str) -> Option<isize> {
    let v = arg(meta, key);
    (!v.is_null()).then(|| v.as_i64().expect("an integer or null") as isize)
}

fn arg_list(meta: &Json, key: &str) -> Vec<isize> {
    arg(meta, key)
        .as_arr()
        .expect("a list")
        .iter()
        .map(|v| v.as_i64().expect("an integer") as isize)
        .collect()
}

fn arg_str<'a>(meta: &'a Json, key: &str) -> &'a str {
    arg(meta, key).as_str().expect("a string")
}

fn arg_bool(meta: &Json, key: &str) -> bool {
    arg(meta, key).as_bool().expect("a bool")
}

/// A JSON number or bool as a Python-typed scalar.
fn scalar(v: &Json) -> Scalar {
    match v {
        Json::Bool(b) => Scalar::Bool(*b),
        Json::Num(n) if n.contains(['.', 'e', 'E']) => Scalar::Float(n.parse().expect("a float")),
        Json::Num(n) => Scalar::Int(n.parse().expect("an int")),
        other => panic!("not a scalar: {other:?}"),
    }
}

fn apply_view(t: Tensor, view: Option<&str>) -> Tensor {
    let v = match view {
        None => return t,
        Some("transpose") => t.transpose(0, 1).unwrap(),
        Some("step") => t.slice(-1, .., 2).unwrap(),
        Some(other) => panic!("unknown view {other}"),
    };
    assert!(!v.is_contiguous() && v.shares_storage(&t), "views must be non-contiguous views");
    v
}

/// Parses an index expression; `{"tensor": k}` refers to `tensors[k]`.
fn expr(v: &Json, tensors: &[Tensor]) -> Vec<TensorIndex> {
    v.as_arr()
        .expect("a list")
        .iter()
        .map(|e| match e {
            Json::Null => TensorIndex::NewAxis,
            Json::Str(s) if s == "..." => TensorIndex::Ellipsis,
            Json::Num(_) => TensorIndex::Int(e.as_i64().unwrap() as isize),
            Json::Obj(_) => {
                if let Some(s) = e.get("slice") {
                    let s = s.as_arr().unwrap();
                    let b = |j: &Json| j.as_i64().map(|v| v as isize);
                    TensorIndex::Slice {
                        start: b(&s[0]),
                        stop: b(&s[1]),
                        step: s[2].as_i64().unwrap() as usize,
                    }
                } else {
                    TensorIndex::Tensor(tensors[e.get("tensor").unwrap().as_i64().unwrap() as usize].clone())
                }
            }
            other => panic!("bad index entry {other:?}"),
        })
        .collect()
}

fn one(t: Result<Tensor>) -> Result<Vec<Tensor>> {
    t.map(|t| vec![t])
}

/// Runs the case's op on its inputs.
fn run(op: &str, meta: &Json, x: &[Tensor]) -> Result<Vec<Tensor>> {
    let all: Vec<&Tensor> = x.iter().collect();
    match op {
        "gather" => one(x[0].gather(arg_i(meta, "dim") as isize, &x[1])),
        "scatter" => one(x[0].scatter(arg_i(meta, "dim") as isize, &x[1], &x[2])),
        "scatter_value" => {
            one(x[0].scatter_value(arg_i(meta, "dim") as isize, &x[1], scalar(arg(meta, "value"))))
        }
        "scatter_add" => one(x[0].scatter_add(arg_i(meta, "dim") as isize, &x[1], &x[2])),
        "scatter_reduce" => one(x[0].scatter_reduce(
            arg_i(meta, "dim") as isize,
            &x[1],
            &x[2],
            arg_str(meta, "reduce"),
            arg_bool(meta, "include_self"),
        )),
        "index_select" => one(x[0].index_select(arg_i(meta, "dim") as isize, &x[1])),
        "index_add" => {
            one(x[0].index_add(arg_i(meta, "dim") as isize, &x[1], &x[2], scalar(arg(meta, "alpha"))))
        }
        "index_copy" => one(x[0].index_copy(arg_i(meta, "dim") as isize, &x[1], &x[2])),
        "index_fill" => one(x[0].index_fill(arg_i(meta, "dim") as isize, &x[1], scalar(arg(meta, "value")))),
        "take" => one(x[0].take(&x[1])),
        "take_along_dim" => one(x[0].take_along_dim(&x[1], arg_opt_i(meta, "dim"))),
        "masked_fill" => one(x[0].masked_fill(&x[1], scalar(arg(meta, "value")))),
        "masked_fill_tensor" => one(x[0].masked_fill(&x[1], &x[2])),
        "masked_select" => one(x[0].masked_select(&x[1])),
        "masked_scatter" => one(x[0].masked_scatter(&x[1], &x[2])),
        "nonzero" => one(x[0].nonzero()),
        "nonzero_tuple" => x[0].nonzero_tuple(),
        "where_nonzero" => Tensor::where_nonzero(&x[0]),
        "getitem" => one(x[0].i(expr(arg(meta, "expr"), &x[1..]))),
        "setitem" => {
            let t = x[0].copy()?;
            t.index_put_(expr(arg(meta, "expr"), &x[2..]), &x[1], arg_bool(meta, "accumulate"))?;
            Ok(vec![t])
        }
        "index_put" => {
            let (v, idx) = x[1..].split_last().unwrap();
            let idx: Vec<TensorIndex> = idx.iter().map(TensorIndex::from).collect();
            one(x[0].index_put(idx, v, arg_bool(meta, "accumulate")))
        }
        "cat" => one(Tensor::cat(&all, arg_i(meta, "dim") as isize)),
        "stack" => one(Tensor::stack(&all, arg_i(meta, "dim") as isize)),
        "hstack" => one(Tensor::hstack(&all)),
        "vstack" => one(Tensor::vstack(&all)),
        "dstack" => one(Tensor::dstack(&all)),
        "tensor_split" => x[0].tensor_split(arg_i(meta, "sections") as usize, arg_i(meta, "dim") as isize),
        "tensor_split_indices" => {
            x[0].tensor_split_indices(&arg_list(meta, "indices"), arg_i(meta, "dim") as isize)
        }
        "split" => x[0].split(arg_i(meta, "size") as usize, arg_i(meta, "dim") as isize),
        "chunk" => x[0].chunk(arg_i(meta, "chunks") as usize, arg_i(meta, "dim") as isize),
        "repeat" => one(x[0].repeat(arg_list(meta, "repeats"))),
        "tile" => one(x[0].tile(arg_list(meta, "dims"))),
        "repeat_interleave" => one(x[0].repeat_interleave(arg_i(meta, "repeats"), arg_opt_i(meta, "dim"))),
        "repeat_interleave_tensor" => one(x[0].repeat_interleave_tensor(&x[1], arg_opt_i(meta, "dim"))),
        "repeat_interleave_self" => one(Tensor::repeat_interleave_self(&x[0])),
        "flip" => one(x[0].flip(arg_list(meta, "dims"))),
        "fliplr" => one(x[0].fliplr()),
        "flipud" => one(x[0].flipud()),
        "roll" => one(x[0].roll(arg_list(meta, "shifts"), arg_list(meta, "dims"))),
        "rot90" => one(x[0].rot90(arg_i(meta, "k"), arg_list(meta, "dims"))),
        "tril" => one(x[0].tril(arg_i(meta, "diagonal"))),
        "triu" => one(x[0].triu(arg_i(meta, "diagonal"))),
        "pad" => {
            let value = arg(meta, "value");
            let value = (!value.is_null()).then(|| value.as_f64().unwrap_or_else(|| scalar(value).to_f64()));
            one(x[0].pad(&arg_list(meta, "pad"), arg_str(meta, "mode"), value))
        }
        "unfold" => one(x[0].unfold(
            arg_i(meta, "dim") as isize,
            arg_i(meta, "size") as usize,
            arg_i(meta, "step") as usize,
        )),
        "meshgrid" => Tensor::meshgrid(&all, arg_str(meta, "indexing")),
        "broadcast_tensors" => Tensor::broadcast_tensors(&all),
        "movedim" => one(x[0].movedim(arg_list(meta, "source"), arg_list(meta, "destination"))),
        other => panic!("unknown op {other}"),
    }
}

/// Whether torch returns views of input 0 for this case (`Some(false)`: a fresh copy; `None`:
/// either, or not checked).
fn expect_view(op: &str, meta: &Json) -> Option<bool> {
    match op {
        "unfold" | "movedim" | "tensor_split" | "tensor_split_indices" | "split" | "chunk" => Some(true),
        "broadcast_tensors" | "meshgrid" => Some(true),
        "getitem" => {
            let e = arg(meta, "expr").as_arr().unwrap();
            Some(!e.iter().any(|e| e.get("tensor").is_some()))
        }
        "flip" | "roll" | "rot90" | "tril" | "triu" | "repeat" | "tile" | "pad" | "gather" | "take"
        | "index_select" | "masked_select" | "cat" | "stack" => Some(false),
        _ => None,
    }
}

fn check_case(st: &SafeTensors, name: &str, meta: &Json) -> std::result::Result<(), String> {
    let op = meta.get("op").and_then(Json::as_str).expect("an op");
    let n_in = meta.get("n_in").and_then(Json::as_i64).expect("n_in") as usize;
    let inputs: Vec<Tensor> = (0..n_in)
        .map(|i| {
            let t = tensor_of(&st.tensor(&format!("{name}.in{i}")).expect("a stored input"));
            let view = meta.get(&format!("in{i}_view")).and_then(Json::as_str);
            apply_view(t, view)
        })
        .collect();
    let outcome = catch_unwind(AssertUnwindSafe(|| run(op, meta, &inputs)))
        .map_err(|payload| format!("oxtorch panicked: {}", panic_message(&*payload)))?;
    if meta.get("error").and_then(Json::as_bool).unwrap_or(false) {
        let want = meta.get("msg").and_then(Json::as_str).unwrap_or("");
        return match outcome {
            Ok(_) => Err(format!("torch raises ({want}) but oxtorch returned Ok")),
            Err(e) if e.to_string() != want && !MESSAGE_DIFFS.contains(&name) => {
                Err(format!("message: torch '{want}', oxtorch '{e}'"))
            }
            Err(_) => Ok(()),
        };
    }
    let got = outcome.map_err(|e| format!("oxtorch failed: {e}"))?;
    let n_out = meta.get("n_out").and_then(Json::as_i64).expect("n_out") as usize;
    if got.len() != n_out {
        return Err(format!("torch gives {n_out} outputs, oxtorch {}", got.len()));
    }
    for (i, g) in got.iter().enumerate() {
        let key = if i == 0 { format!("{name}.out") } else { format!("{name}.out{i}") };
        let want = tensor_of(&st.tensor(&key).expect("a stored output"));
        let (rtol, atol) = tolerance(want.dtype());
        compare(g, &want, rtol, atol).map_err(|e| format!("output {i}: {e}"))?;
        // Multi-input view ops return a view of their i-th input.
        let source =
            if matches!(op, "meshgrid" | "broadcast_tensors") { inputs.get(i) } else { inputs.first() };
        if let (Some(view), Some(x)) = (expect_view(op, meta), source) {
            if g.numel() > 0 && x.numel() > 0 && g.shares_storage(x) != view {
                return Err(format!("output {i}: expected a {}", if view { "view" } else { "copy" }));
            }
        }
    }
    Ok(())
}

#[test]
fn golden_indexshape_match_torch() {
    let golden = Golden::read(GOLDEN, "tests/golden/make_golden_indexshape.py", MIN_CASES);
    let (st, cases) = (golden.tensors(), golden.cases());
    let unknown: Vec<&&str> = MESSAGE_DIFFS.iter().filter(|k| !cases.contains_key(**k)).collect();
    assert!(unknown.is_empty(), "MESSAGE_DIFFS names cases that are not in the golden file: {unknown:?}");

    let failures: Vec<String> = quietly(|| {
        cases
            .iter()
            .filter_map(|(name, meta)| check_case(&st, name, meta).err().map(|e| format!("{name}: {e}")))
            .collect()
    });
    let errors = cases.values().filter(|m| m.get("error").and_then(Json::as_bool) == Some(true)).count();
    println!("golden indexshape: {} cases ({errors} error cases), {} failed", cases.len(), failures.len());
    for f in &failures {
        println!("  FAILED {f}");
    }
    assert!(failures.is_empty(), "{} of {} golden cases failed", failures.len(), cases.len());
}

// Hand-written edge cases: views, in-place assignment, the parallel path, hostile indices.

use oxtorch_tensor::{DType, Ellipsis, NewAxis};

fn arange(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::arange(n as i64, DType::F32).unwrap().reshape(shape.to_vec()).unwrap()
}

#[test]
fn basic_indexing_returns_views_that_write_through() {
    let t = arange(&[3, 4, 5]);
    let v = t.i((1, 1..3, NewAxis, TensorIndex::slice(.., 2))).unwrap();
    assert_eq!(v.dims(), &[2, 1, 3]);
    assert!(v.shares_storage(&t));
    v.fill_(-1.0).unwrap();
    assert_eq!(t.i((1, 1, 0)).unwrap().item::<f32>().unwrap(), -1.0);
    assert_eq!(t.i((1, 1, 1)).unwrap().item::<f32>().unwrap(), 26.0);
    let e = t.i((Ellipsis, 0)).unwrap();
    assert_eq!(e.dims(), &[3, 4]);
    assert!(e.shares_storage(&t));
}

#[test]
fn advanced_indexing_copies_and_places_dims_like_torch() {
    let t = arange(&[3, 4, 5]);
    let i = Tensor::from_vec(vec![0i64, 2], [2]).unwrap();
    // Adjacent advanced indices stay in place, separated ones go first.
    assert_eq!(t.i((.., &i, &i)).unwrap().dims(), &[3, 2]);
    assert_eq!(t.i((&i, .., &i)).unwrap().dims(), &[2, 4]);
    let c = t.i((.., &i)).unwrap();
    assert!(!c.shares_storage(&t));
    assert_eq!(c.to_vec::<f32>().unwrap()[..5], [0.0, 1.0, 2.0, 3.0, 4.0]);
}

/// A 0-d integer tensor indexes as its integer (a select, a view), as in torch; setitem drops
/// the values' leading unit dims and casts them through basic indices (torch 2.15's outcomes).
#[test]
fn zero_dim_index_tensors_select_and_setitem_follows_torch() {
    let y = Tensor::zeros([2, 3, 4], DType::F32).unwrap();
    let zero = Tensor::from_vec(vec![0i64], []).unwrap();
    let one = Tensor::from_vec(vec![1i32], []).unwrap();
    let cols = Tensor::from_vec(vec![1i64, 2], [2]).unwrap();
    assert_eq!(y.i((&zero, .., &cols)).unwrap().dims(), &[3, 2]);
    let v = y.i(&one).unwrap();
    assert!(v.shares_storage(&y));
    v.fill_(1.0).unwrap();
    assert_eq!(y.sum_all().unwrap().item::<f32>().unwrap(), 12.0);
    // torch writes y[0] row by row; an advanced reading of the 0-d index wrote the transpose.
    let y = Tensor::zeros([2, 3, 3], DType::F32).unwrap();
    let all = Tensor::from_vec(vec![0i64, 1, 2], [3]).unwrap();
    let vals = Tensor::arange(9, DType::F32).unwrap().reshape([3, 3]).unwrap();
    y.index_put_((&zero, .., &all), &vals, false).unwrap();
    assert_eq!(y.i(0).unwrap().to_vec::<f32>().unwrap(), vals.to_vec::<f32>().unwrap());
    let e = y.i((&Tensor::from_vec(vec![5i64], []).unwrap(),)).unwrap_err().to_string();
    assert!(e.contains("index 5 is out of bounds for dimension 0 with size 2"), "{e}");
    // z[0] = ones(1, 1, 3); z[:] = int64 values.
    let z = Tensor::zeros([2, 3], DType::F32).unwrap();
    z.index_put_(0, Tensor::ones([1, 1, 3], DType::F32).unwrap(), false).unwrap();
    assert_eq!(z.sum_all().unwrap().item::<f32>().unwrap(), 3.0);
    z.index_put_(.., Tensor::from_vec(vec![1i64, 2, 3], [3]).unwrap(), false).unwrap();
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    // A 0-d index selects, so the values are cast as through any view.
    z.index_put_(&zero, Tensor::from_vec(vec![7.0f64, 8.0, 9.0], [3]).unwrap(), false).unwrap();
    assert_eq!(z.i(0).unwrap().to_vec::<f32>().unwrap(), vec![7.0, 8.0, 9.0]);
    // Through index tensors the dtypes must match, as torch's index_put_.
    assert!(z
        .index_put_(&all.narrow(0, 0, 2).unwrap(), Tensor::zeros([3], DType::I64).unwrap(), false)
        .is_err());
}

#[test]
fn index_put_writes_through_non_contiguous_views() {
    let base = Tensor::zeros([4, 3], DType::F32).unwrap();
    let view = base.t().unwrap(); // [3, 4], non-contiguous
    let rows = Tensor::from_vec(vec![0i64, 2, 0], [3]).unwrap();
    let cols = Tensor::from_vec(vec![1i64, 3, 1], [3]).unwrap();
    let vals = Tensor::from_vec(vec![1.0f32, 2.0, 4.0], [3]).unwrap();
    let before = base.version();
    view.index_put_((&rows, &cols), &vals, true).unwrap();
    assert!(base.version() > before);
    // view[0, 1] = base[1, 0] accumulates 1 + 4; view[2, 3] = base[3, 2] = 2.
    assert_eq!(base.i((1, 0)).unwrap().item::<f32>().unwrap(), 5.0);
    assert_eq!(base.i((3, 2)).unwrap().item::<f32>().unwrap(), 2.0);
    assert_eq!(base.sum_all().unwrap().item::<f32>().unwrap(), 7.0);
    // Basic-index assignment with a number.
    base.index_put_((.., 0), 9.0, false).unwrap();
    assert_eq!(base.i((.., 0)).unwrap().to_vec::<f32>().unwrap(), vec![9.0; 4]);
}

#[test]
fn unfold_and_movedim_are_views() {
    let t = arange(&[2, 7]);
    let u = t.unfold(1, 3, 2).unwrap();
    assert_eq!(u.dims(), &[2, 3, 3]);
    assert!(u.shares_storage(&t));
    let m = arange(&[2, 3, 4]).movedim([0], [2]).unwrap();
    assert_eq!(m.dims(), &[3, 4, 2]);
}

#[test]
fn hostile_indices_are_errors_not_panics() {
    let t = arange(&[3, 4]);
    for bad in [i64::MAX, i64::MIN, -5, 4] {
        let idx = Tensor::from_vec(vec![bad], [1]).unwrap();
        let idx2 = Tensor::from_vec(vec![bad], [1, 1]).unwrap();
        assert!(t.index_select(1, &idx).is_err());
        assert!(t.take(&Tensor::from_vec(vec![bad.saturating_mul(4)], [1]).unwrap()).is_err());
        assert!(t.gather(1, &idx2).is_err());
        assert!(t.scatter_add(1, &idx2, &t).is_err());
        assert!(t.index_fill(1, &idx, 0.0).is_err());
        assert!(t.i((.., &idx)).is_err());
        assert!(t.index_put_((.., &idx), 1.0, true).is_err());
    }
    assert!(t.i((0, 0, 0)).is_err());
    assert!(t.i(3).is_err());
}

#[test]
fn large_gather_and_scatter_match_a_sequential_reference() {
    // Over walk::PAR_MIN_CHUNK elements, so the gather runs in parallel chunks.
    let (rows, cols) = (300usize, 200usize);
    let x = arange(&[rows, cols]);
    let idx: Vec<i64> = (0..rows * cols).map(|k| ((k * 7919) % cols) as i64).collect();
    let index = Tensor::from_vec(idx.clone(), [rows, cols]).unwrap();
    let got = x.gather(1, &index).unwrap().to_vec::<f32>().unwrap();
    for (k, g) in got.iter().enumerate() {
        assert_eq!(*g, ((k / cols) * cols) as f32 + idx[k] as f32);
    }
    let ones = Tensor::ones([rows, cols], DType::F32).unwrap();
    let counts = Tensor::zeros([rows, cols], DType::F32).unwrap().scatter_add(1, &index, &ones).unwrap();
    assert_eq!(counts.sum_all().unwrap().item::<f32>().unwrap(), (rows * cols) as f32);
    let nz = x.nonzero().unwrap();
    assert_eq!(nz.dims(), &[rows * cols - 1, 2]);
}
