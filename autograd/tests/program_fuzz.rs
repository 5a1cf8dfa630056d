//! Randomized straight-line autograd programs (views, in-place ops on intermediates and on views of
//! them, out-of-place ops, detach, clone, retain_grad, backward twice, second-order `grad`) replayed
//! against torch's float64 losses, gradients and errors (program_fuzz/golden.rs, from
//! make_program_fuzz_golden.py). Every mismatch is collected; the test fails once at the end.

#[path = "program_fuzz/golden.rs"]
mod golden;

use std::panic::{catch_unwind, AssertUnwindSafe};

use golden::{Case, CASES, G};
use oxtorch_autograd::grad;
use oxtorch_tensor::{Operand, Result, Tensor};

fn il(t: &str) -> Vec<isize> {
    if t == "_" {
        return vec![];
    }
    t.split(',').map(|v| v.parse().expect("an integer")).collect()
}

fn ul(t: &str) -> Vec<usize> {
    il(t).into_iter().map(|v| v as usize).collect()
}

fn fl(t: &str) -> Vec<f64> {
    if t == "_" {
        return vec![];
    }
    t.split(',').map(|v| v.parse().expect("a number")).collect()
}

fn int(t: &str) -> isize {
    t.parse().expect("an integer")
}

fn num(t: &str) -> f64 {
    t.parse().expect("a number")
}

fn reg_index(t: &str) -> usize {
    t.strip_prefix('v').expect("a register").parse().expect("a register number")
}

/// The interpreter's state: the leaves and the registers.
struct Machine {
    leaves: Vec<Tensor>,
    regs: Vec<Option<Tensor>>,
    retained: Vec<usize>,
}

impl Machine {
    fn new(case: &Case) -> Result<Machine> {
        let leaves = case
            .inputs
            .iter()
            .map(|g| Tensor::from_slice(g.1, g.0.to_vec())?.requires_grad_(true))
            .collect::<Result<Vec<_>>>()?;
        Ok(Machine { leaves, regs: vec![], retained: vec![] })
    }

    fn r(&self, t: &str) -> Tensor {
        self.regs[reg_index(t)].clone().expect("a defined register")
    }

    /// Runs one line of the program.
    fn exec(&mut self, line: &str) -> Result<()> {
        let toks: Vec<&str> = line.split_whitespace().collect();
        let (dst, op, a) = if toks.len() > 1 && toks[1] == "=" {
            (Some(reg_index(toks[0])), toks[2], &toks[3..])
        } else {
            (None, toks[0], &toks[1..])
        };
        let b = |t: &str| t == "1";
        let out: Option<Tensor> = match op {
            "leaf" => Some(self.leaves[int(a[0]) as usize].clone()),
            "constf" => Some(Tensor::from_slice(&fl(a[1])[..], ul(a[0]))?),
            "consti" => {
                let v: Vec<i64> = il(a[1]).into_iter().map(|v| v as i64).collect();
                Some(Tensor::from_slice(&v[..], ul(a[0]))?)
            }
            "constb" => {
                let v: Vec<bool> = il(a[1]).into_iter().map(|v| v != 0).collect();
                Some(Tensor::from_slice(&v[..], ul(a[0]))?)
            }
            "slice" => {
                let (s, e) = (int(a[2]), int(a[3]));
                Some(self.r(a[0]).slice(int(a[1]), s..e, int(a[4]) as usize)?)
            }
            "select" => Some(self.r(a[0]).select(int(a[1]), int(a[2]))?),
            "narrow" => Some(self.r(a[0]).narrow(int(a[1]), int(a[2]), int(a[3]) as usize)?),
            "transpose" => Some(self.r(a[0]).transpose(int(a[1]), int(a[2]))?),
            "permute" => Some(self.r(a[0]).permute(il(a[1]))?),
            "expand" => Some(self.r(a[0]).expand(il(a[1]))?),
            "unsqueeze" => Some(self.r(a[0]).unsqueeze(int(a[1]))?),
            "squeeze" => Some(self.r(a[0]).squeeze()?),
            "view" => Some(self.r(a[0]).view(il(a[1]))?),
            "reshape" => Some(self.r(a[0]).reshape(il(a[1]))?),
            "diagonal" => Some(self.r(a[0]).diagonal(int(a[1]), int(a[2]), int(a[3]))?),
            "unbind" => Some(nth(self.r(a[0]).unbind(int(a[1]))?, a[2])),
            "split" => Some(nth(self.r(a[0]).split(int(a[1]) as usize, int(a[2]))?, a[3])),
            "chunk" => Some(nth(self.r(a[0]).chunk(int(a[1]) as usize, int(a[2]))?, a[3])),
            "as_strided" => Some(self.r(a[0]).as_strided(&ul(a[1]), &ul(a[2]), None)?),
            "detach" => Some(self.r(a[0]).detach()),
            "clone" => Some(self.r(a[0]).copy()?),
            "exp" => Some(self.r(a[0]).exp()?),
            "sin" => Some(self.r(a[0]).sin()?),
            "sigmoid" => Some(self.r(a[0]).sigmoid()?),
            "tanh" => Some(self.r(a[0]).tanh()?),
            "pow" => Some(self.r(a[0]).pow(num(a[1]))?),
            "add" => Some(self.r(a[0]).add(self.r(a[1]))?),
            "mul" => Some(self.r(a[0]).mul(self.r(a[1]))?),
            "sub" => Some(self.r(a[0]).sub(self.r(a[1]))?),
            "div" => Some(self.r(a[0]).div(self.r(a[1]))?),
            "matmul" => Some(self.r(a[0]).matmul(&self.r(a[1]))?),
            "adds" => Some(self.r(a[0]).add(num(a[1]))?),
            "muls" => Some(self.r(a[0]).mul(num(a[1]))?),
            "sum" => Some(self.r(a[0]).sum(il(a[1]), b(a[2]))?),
            "mean" => Some(self.r(a[0]).mean(il(a[1]), b(a[2]))?),
            "sum_all" => Some(self.r(a[0]).sum_all()?),
            "mean_all" => Some(self.r(a[0]).mean_all()?),
            "softmax" => Some(self.r(a[0]).softmax(int(a[1]), None)?),
            "where" => Some(Tensor::where_cond(&self.r(a[0]), self.r(a[1]), self.r(a[2]))?),
            "cat" | "stack" => {
                let ts: Vec<Tensor> = a[1..].iter().map(|t| self.r(t)).collect();
                let refs: Vec<&Tensor> = ts.iter().collect();
                Some(if op == "cat" {
                    Tensor::cat(&refs, int(a[0]))?
                } else {
                    Tensor::stack(&refs, int(a[0]))?
                })
            }
            "gather" => Some(self.r(a[0]).gather(int(a[1]), &self.r(a[2]))?),
            "index_select" => Some(self.r(a[0]).index_select(int(a[1]), &self.r(a[2]))?),
            "maxv" => Some(self.r(a[0]).max_dim(int(a[1]), b(a[2]))?.0),
            "cumsum" => Some(self.r(a[0]).cumsum(int(a[1]), None)?),
            "sortv" => Some(self.r(a[0]).sort(int(a[1]), b(a[2]))?.0),
            "norm" => Some(self.r(a[0]).norm(num(a[1]), il(a[2]), b(a[3]))?),
            "add_" => self.r(a[0]).add_(self.r(a[1])).map(|_| None)?,
            "sub_" => self.r(a[0]).sub_(self.r(a[1])).map(|_| None)?,
            "mul_" => self.r(a[0]).mul_(self.r(a[1])).map(|_| None)?,
            "div_" => self.r(a[0]).div_(self.r(a[1])).map(|_| None)?,
            "copy_" => self.r(a[0]).copy_(&self.r(a[1])).map(|_| None)?,
            "adds_" => self.r(a[0]).add_(num(a[1])).map(|_| None)?,
            "subs_" => self.r(a[0]).sub_(num(a[1])).map(|_| None)?,
            "muls_" => self.r(a[0]).mul_(num(a[1])).map(|_| None)?,
            "divs_" => self.r(a[0]).div_(num(a[1])).map(|_| None)?,
            "clamp_" => {
                let (lo, hi) = (Operand::from(num(a[1])), Operand::from(num(a[2])));
                self.r(a[0]).clamp_(Some(lo), Some(hi)).map(|_| None)?
            }
            "exp_" => self.r(a[0]).exp_().map(|_| None)?,
            "sin_" => self.r(a[0]).sin_().map(|_| None)?,
            "sigmoid_" => self.r(a[0]).sigmoid_().map(|_| None)?,
            "zero_" => self.r(a[0]).zero_().map(|_| None)?,
            "fill_" => self.r(a[0]).fill_(num(a[1])).map(|_| None)?,
            "pow_" => self.r(a[0]).pow_(num(a[1])).map(|_| None)?,
            "masked_fill_" => self.r(a[0]).masked_fill_(&self.r(a[1]), num(a[2])).map(|_| None)?,
            "index_add_" => {
                self.r(a[0]).index_add_(int(a[1]), &self.r(a[2]), &self.r(a[3]), 1.0).map(|_| None)?
            }
            "scatter_" => self.r(a[0]).scatter_(int(a[1]), &self.r(a[2]), &self.r(a[3])).map(|_| None)?,
            "retain_grad" => {
                self.r(a[0]).retain_grad()?;
                self.retained.push(reg_index(a[0]));
                None
            }
            other => panic!("unknown op {other}"),
        };
        if let Some(d) = dst {
            if self.regs.len() <= d {
                self.regs.resize(d + 1, None);
            }
            self.regs[d] = out;
        }
        Ok(())
    }
}

fn nth(v: Vec<Tensor>, k: &str) -> Tensor {
    v.into_iter().nth(int(k) as usize).expect("an output of the split")
}

fn close(x: f64, y: f64) -> bool {
    (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-10 * (1.0 + y.abs())
}

/// Compares a gradient with torch's; pushes what differs.
fn compare(what: &str, got: Option<&Tensor>, want: &Option<G>, diffs: &mut Vec<String>) {
    match (got, want) {
        (None, None) => {}
        (Some(g), None) => {
            diffs.push(format!("{what}: torch has None, got a tensor of shape {:?}", g.dims()))
        }
        (None, Some(w)) => {
            diffs.push(format!("{what}: got None, torch has shape {:?} values {:?}", w.0, w.1))
        }
        (Some(g), Some(w)) => {
            if g.dims() != w.0 {
                diffs.push(format!("{what}: shape {:?}, torch {:?}", g.dims(), w.0));
                return;
            }
            match g.to_f64_vec() {
                Err(e) => diffs.push(format!("{what}: reading values failed: {e}")),
                Ok(v) => {
                    if v.len() != w.1.len() || v.iter().zip(w.1).any(|(x, y)| !close(*x, *y)) {
                        diffs.push(format!("{what}: got {v:?}, torch {:?}", w.1));
                    }
                }
            }
        }
    }
}

/// What differs from torch in one case (empty when it matches).
/// Torch errors oxtorch does not raise (it runs on, with correct gradients): a saved value
/// modified in place that its own formula does not read (oxtorch's nodes save what they read and
/// check those versions), an in-place write to one output of split/unbind/chunk (oxtorch rebases
/// the view's history instead), a write whose source overlaps its destination (oxtorch reads a
/// copy).
const LENIENT: &[&str] = &[
    "modified by an inplace operation",
    "This view is the output of a function that returns multiple views",
    "refer to a single memory location",
];

/// Cases with a known, documented difference: 219 retains `.grad` on a view whose base was written
/// in place afterwards (torch drops the retained grad when it regenerates the view's history;
/// oxtorch moves it to the new node).
const KNOWN_DIFFERENT: &[usize] = &[219];

fn run_case(case: &Case) -> Vec<String> {
    let mut diffs = vec![];
    let mut m = match Machine::new(case) {
        Ok(m) => m,
        Err(e) => return vec![format!("creating the leaves failed: {e}")],
    };
    let want_err = case.error.map(|(s, _)| s);
    let torch_msg = case.error.map(|(_, msg)| msg).unwrap_or("");
    // The stage at which we failed, with our message.
    let mut failed: Option<(usize, String)> = None;
    let lines: Vec<&str> = case.program.split('\n').collect();
    let n = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if let Err(e) = m.exec(line) {
            failed = Some((i, e.to_string()));
            break;
        }
    }
    // The finish: backward once or twice, or first- then second-order `grad`.
    let mut first: Vec<Option<Tensor>> = vec![];
    let mut second: Vec<Option<Tensor>> = vec![];
    let mut loss_value = None;
    if failed.is_none() {
        let loss = m.regs[case.loss_reg].clone().expect("the loss register");
        loss_value = Some(loss.to_f64_vec());
        let stage1 = match case.finish {
            "backward" => loss.backward(),
            "backward_twice" => loss.backward_with(None, true, false),
            "backward_twice_noretain" => loss.backward(),
            "grad2" => {
                grad(std::slice::from_ref(&loss), &m.leaves, None, true, true, true).map(|g| first = g)
            }
            other => panic!("unknown finish {other}"),
        };
        if let Err(e) = stage1 {
            failed = Some((n, e.to_string()));
        } else {
            let stage2 = match case.finish {
                "backward_twice" | "backward_twice_noretain" => loss.backward(),
                "grad2" => second_order(&first, &m.leaves).map(|g| second = g),
                _ => Ok(()),
            };
            if let Err(e) = stage2 {
                failed = Some((n + 1, e.to_string()));
            }
        }
    }
    // torch's strict checks that oxtorch does not make where its own formulas never read the
    // overwritten values (its gradients stay right; see the session-33 note): a program torch
    // stops there runs on here, so nothing after that point can be compared.
    if want_err.is_some() && LENIENT.iter().any(|f| torch_msg.contains(f)) {
        let at = want_err.unwrap_or(0);
        if failed.as_ref().is_none_or(|(s, _)| *s >= at) {
            return diffs;
        }
    }
    match (want_err, &failed) {
        (Some(w), None) => {
            diffs.push(format!("torch raised at stage {w} ({torch_msg}), oxtorch did not"));
            return diffs;
        }
        (Some(w), Some((s, msg))) => {
            if *s != w {
                diffs.push(format!("torch raised at stage {w} ({torch_msg}), oxtorch at stage {s}: {msg}"));
            }
            return diffs;
        }
        (None, Some((s, msg))) => {
            diffs.push(format!("oxtorch raised at stage {s} (torch did not): {msg}"));
            return diffs;
        }
        (None, None) => {}
    }
    match loss_value {
        Some(Ok(v)) if v.len() == 1 && close(v[0], case.loss) => {}
        Some(Ok(v)) => diffs.push(format!("loss: got {v:?}, torch {}", case.loss)),
        Some(Err(e)) => diffs.push(format!("loss: reading failed: {e}")),
        None => {}
    }
    if case.finish == "grad2" {
        for (i, want) in case.grads.iter().enumerate() {
            compare(&format!("grad leaf {i}"), first.get(i).and_then(|g| g.as_ref()), want, &mut diffs);
        }
        for (i, want) in case.second.iter().enumerate() {
            compare(
                &format!("second-order grad leaf {i}"),
                second.get(i).and_then(|g| g.as_ref()),
                want,
                &mut diffs,
            );
        }
    } else {
        for (i, want) in case.grads.iter().enumerate() {
            compare(&format!("leaf {i} .grad"), m.leaves[i].grad().as_ref(), want, &mut diffs);
        }
        for (r, want) in case.retained {
            let got = m.regs[*r].as_ref().and_then(|t| t.grad());
            compare(&format!("retained v{r} .grad"), got.as_ref(), want, &mut diffs);
        }
    }
    diffs
}

/// `grad(sum_i (g_i * leaf_i).sum(), leaves, allow_unused=True)` over the first-order gradients.
fn second_order(first: &[Option<Tensor>], leaves: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
    let mut s: Option<Tensor> = None;
    for (g, leaf) in first.iter().zip(leaves) {
        if let Some(g) = g {
            let term = g.mul(leaf)?.sum_all()?;
            s = Some(match s {
                None => term,
                Some(acc) => acc.add(&term)?,
            });
        }
    }
    let s = s.ok_or_else(|| oxtorch_tensor::Error::msg("no first-order gradient"))?;
    grad(std::slice::from_ref(&s), leaves, None, false, false, true)
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic".to_string()
    }
}

#[test]
fn random_programs_match_torch() {
    let mut report = vec![];
    for case in CASES {
        let diffs = match catch_unwind(AssertUnwindSafe(|| run_case(case))) {
            Ok(d) => d,
            Err(p) => vec![format!("panicked: {}", panic_text(p))],
        };
        if KNOWN_DIFFERENT.contains(&case.id) {
            assert!(!diffs.is_empty(), "case {} matches torch now: take it off KNOWN_DIFFERENT", case.id);
            continue;
        }
        if !diffs.is_empty() {
            report.push(format!(
                "case {} (finish {}):\n  {}\n  => {}",
                case.id,
                case.finish,
                case.program.replace('\n', "\n  "),
                diffs.join("\n  => ")
            ));
        }
    }
    assert!(
        report.is_empty(),
        "{} of {} programs differ from torch:\n\n{}",
        report.len(),
        CASES.len(),
        report.join("\n\n")
    );
}
