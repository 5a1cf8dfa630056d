//! torch's `Sequential` editing API (`insert`, `pop`, `append`, `extend`, the `OrderedDict` form,
//! indexing and iteration) and `ModuleList.pop`/`insert`: the state-dict keys and child names
//! after each edit, and the errors, against `sequential_edits_golden.rs` (written by
//! `nn/tests/make_module_repr_extra_layers_golden.py` with torch); forward passes after edits against the layers
//! applied by hand.

use oxtorch_nn::{Forward, Layer, Linear, ModuleExt, ModuleList, ReLU, Sequential, Tanh};
use oxtorch_tensor::{DType, Result, Tensor};

include!("sequential_edits_golden.rs");

fn lin(i: usize, o: usize) -> Result<Box<dyn Layer>> {
    Ok(Box::new(Linear::new(i, o, true)?))
}

fn relu() -> Box<dyn Layer> {
    Box::new(ReLU {})
}

/// torch's `Sequential(Linear(2, 3), ReLU(), Linear(3, 1))`.
fn base() -> Result<Sequential> {
    Ok(Sequential::new().add(Linear::new(2, 3, true)?).add(ReLU {}).add(Linear::new(3, 1, true)?))
}

/// torch's `Sequential(OrderedDict(conv1=Linear(2, 3), act=ReLU(), fc=Linear(3, 1)))`.
fn named() -> Result<Sequential> {
    Sequential::from_named(vec![("conv1", lin(2, 3)?), ("act", relu()), ("fc", lin(3, 1)?)])
}

/// The state-dict keys and child names of `s`.
fn keys(s: &Sequential) -> (Vec<String>, Vec<String>) {
    (s.state_dict().keys().map(str::to_string).collect(), s.names().map(str::to_string).collect())
}

/// The sequences of the generator's `container_cases`, edited the same way.
fn edited(case: &str) -> Result<Sequential> {
    let mut s = match case {
        "named" | "named_append" | "named_append_pop" => named()?,
        _ => base()?,
    };
    match case {
        "insert_1" => {
            s.insert(1, lin(3, 3)?)?;
        }
        "insert_neg1" => {
            s.insert(-1, lin(3, 3)?)?;
        }
        "insert_end" => {
            s.insert(3, lin(1, 2)?)?;
        }
        "pop_0" => {
            s.pop(0)?;
        }
        "pop_neg1" => {
            s.pop(-1)?;
        }
        "extend" => {
            s.extend(Sequential::new().add(Linear::new(1, 2, true)?).add(Linear::new(2, 2, true)?));
        }
        "named" => {}
        "named_append" => {
            s.append(lin(1, 1)?);
        }
        "named_append_pop" => {
            s.append(lin(1, 1)?);
            s.pop(1)?;
        }
        other => panic!("no edit for golden case {other}"),
    }
    Ok(s)
}

#[test]
fn sequential_edits_name_children_as_torch() -> Result<()> {
    for &(case, want_keys, want_children) in CONTAINER_KEYS {
        let s = edited(case)?;
        let (k, c) = keys(&s);
        assert_eq!(k, want_keys, "state-dict keys after {case}");
        assert_eq!(c, want_children, "children after {case}");
        assert_eq!(s.len(), want_children.len(), "len after {case}");
    }
    Ok(())
}

/// The error message of a refused edit.
fn err<T>(r: Result<T>) -> String {
    r.err().map(|e| e.to_string()).unwrap_or_else(|| "no error".to_string())
}

#[test]
fn sequential_errors_are_torch_messages() -> Result<()> {
    for &(case, want) in CONTAINER_ERRORS {
        let mut s = base()?;
        let mut list = ModuleList::<Box<dyn Layer>>::new(vec![relu(), Box::new(Tanh {})]);
        let got = match case {
            "pop_5" => err(s.pop(5)),
            "pop_neg4" => err(s.pop(-4)),
            "pop_empty" => err(Sequential::new().pop(0)),
            "insert_5" => err(s.insert(5, relu())),
            "insert_neg4" => err(s.insert(-4, relu())),
            "getitem_3" => err(s.at(3)),
            // torch raises `KeyError('1')`
            "named_insert_0" => {
                let mut n = Sequential::from_named(vec![("a", relu()), ("b", relu())])?;
                let e = err(n.insert(0, relu()));
                assert_eq!(e, format!("KeyError: '{want}'"));
                continue;
            }
            "add_module_dot" => err(s.push_named("x.y", relu())),
            "add_module_empty" => err(Sequential::from_named(vec![("", relu())])),
            "modulelist_pop_2" => err(list.pop(2)),
            other => panic!("no check for golden case {other}"),
        };
        assert_eq!(got, want, "error of {case}");
        // a refused edit leaves the sequence as it was
        assert_eq!(s.len(), 3, "len after refused {case}");
    }
    Ok(())
}

#[test]
fn forward_after_insert_and_pop() -> Result<()> {
    let x = Tensor::randn([4, 2], DType::F32)?;
    let l1 = Linear::new(2, 3, true)?;
    let l3 = Linear::new(3, 1, true)?;
    let want_relu = l3.forward(&l1.forward(&x)?.relu()?)?;
    let want_plain = l3.forward(&l1.forward(&x)?)?;
    let mut s = Sequential::new().add(l1).add(l3);
    assert!(s.forward(&x)?.equal(&want_plain)?);
    s.insert(1, relu())?;
    assert_eq!(s.get(1).map(|l| l.type_name()), Some("ReLU"));
    assert!(s.forward(&x)?.equal(&want_relu)?);
    let popped = s.pop(-2)?;
    assert_eq!(popped.type_name(), "ReLU");
    assert!(s.forward(&x)?.equal(&want_plain)?);
    // indexing, iteration and replacement
    assert_eq!(s[1].type_name(), "Linear");
    assert_eq!(s.at(-1)?.type_name(), "Linear");
    let names: Vec<&str> = s.iter().map(|l| l.type_name()).collect();
    assert_eq!(names, ["Linear", "Linear"]);
    let old = s.set(-1, Box::new(Tanh {}))?;
    assert_eq!(old.type_name(), "Linear");
    let named: Vec<String> = s.named_layers().map(|(k, l)| format!("{k}:{}", l.type_name())).collect();
    assert_eq!(named, ["0:Linear", "1:Tanh"]);
    assert!(s.get_mut(2).is_none());
    Ok(())
}

#[test]
fn named_sequential_forward_and_state_dict() -> Result<()> {
    let s = named()?;
    let x = Tensor::randn([3, 2], DType::F32)?;
    let conv1 = s.get_parameter("conv1.weight")?;
    let b1 = s.get_parameter("conv1.bias")?;
    let fc = s.get_parameter("fc.weight")?;
    let b2 = s.get_parameter("fc.bias")?;
    let want = x.linear(&conv1, Some(&b1))?.relu()?.linear(&fc, Some(&b2))?;
    let got = s.forward(&x)?;
    let (g, w) = (got.to_f64_vec()?, want.to_f64_vec()?);
    assert_eq!(g.len(), w.len());
    for (a, b) in g.iter().zip(&w) {
        assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
    }
    assert_eq!(s.get_submodule("act")?.type_name(), "ReLU");
    Ok(())
}

#[test]
fn module_list_insert_and_pop() -> Result<()> {
    let mut list = ModuleList::<Box<dyn Layer>>::new(vec![lin(2, 2)?, relu()]);
    list.insert(0, lin(2, 3)?)?;
    list.append(lin(3, 1)?);
    let keys: Vec<String> = list.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"]);
    let popped = list.pop(-3)?;
    assert_eq!(popped.type_name(), "Linear");
    let keys: Vec<String> = list.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["0.weight", "0.bias", "2.weight", "2.bias"]);
    assert_eq!(err(list.insert(5, relu())), "index 5 is out of range");
    assert_eq!(err(list.pop(3)), "index 3 is out of range");
    assert_eq!(list.len(), 3);
    Ok(())
}
