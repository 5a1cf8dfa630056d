//! `einsum`: the equation parser and its lowering to diagonals, sums, permutes and batched matmuls.

use oxtorch_core::{DType, Error, Result};

use crate::Tensor;

/// A dimension label: a letter's code point, or `ELLIPSIS + i` for the `i`-th broadcast dim.
type Label = u32;
const ELLIPSIS: Label = 1000;

fn err(m: impl Into<String>) -> Error {
    Error::msg(format!("einsum(): {}", m.into()))
}

/// One side of the equation: its letters, and where `...` stood (if it did).
struct Term {
    letters: Vec<Label>,
    ellipsis: Option<usize>,
}

fn bad_subscript(i: usize) -> Error {
    err(format!(
        "invalid subscript given at index {i} in the equation string, {}",
        "subscripts must be in [a-zA-Z]"
    ))
}

fn parse_term(s: &str) -> Result<Term> {
    let mut letters = Vec::new();
    let mut ellipsis = None;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' => {}
            b'.' => {
                if b.get(i..i + 3) != Some(b"...") || ellipsis.is_some() {
                    return Err(err("found '.' for operand that is not part of any ellipsis"));
                }
                ellipsis = Some(letters.len());
                i += 2;
            }
            c if c.is_ascii_alphabetic() => letters.push(c as Label),
            _ => return Err(bad_subscript(i)),
        }
        i += 1;
    }
    Ok(Term { letters, ellipsis })
}

/// The term's labels for an operand of `rank` dims, the ellipsis covering `rank - letters` dims that
/// are right-aligned against `max_ell` broadcast labels.
fn labels_of(t: &Term, ell_dims: usize, max_ell: usize) -> Vec<Label> {
    let mut out = t.letters.clone();
    if let Some(p) = t.ellipsis {
        let ell: Vec<Label> = (max_ell - ell_dims..max_ell).map(|i| ELLIPSIS + i as Label).collect();
        out.splice(p..p, ell);
    }
    out
}

fn name(l: Label) -> String {
    if l >= ELLIPSIS {
        "...".into()
    } else {
        char::from_u32(l).map(String::from).unwrap_or_default()
    }
}

/// An operand with unique labels.
struct Op {
    t: Tensor,
    labels: Vec<Label>,
}

impl Op {
    /// Takes diagonals until every label appears once.
    fn new(mut t: Tensor, mut labels: Vec<Label>, index: usize) -> Result<Op> {
        loop {
            let dup = (0..labels.len())
                .find_map(|i| (i + 1..labels.len()).find(|&j| labels[j] == labels[i]).map(|j| (i, j)));
            let Some((i, j)) = dup else { break };
            let (si, sj) = (t.dims()[i], t.dims()[j]);
            if si != sj {
                return Err(err(format!(
                    "subscript {} is repeated for operand {index} but the sizes don't match, {sj} != {si}",
                    name(labels[i])
                )));
            }
            t = t.diagonal(0, i as isize, j as isize)?;
            let l = labels[i];
            labels.remove(j);
            labels.remove(i);
            labels.push(l);
        }
        Ok(Op { t, labels })
    }

    fn size(&self, l: Label) -> usize {
        self.labels.iter().position(|&x| x == l).map_or(1, |i| self.t.dims()[i])
    }

    /// Sums out the labels not in `keep` (the dtype is kept: integer sums would widen).
    fn sum_except(self, keep: &[Label]) -> Result<Op> {
        let dims: Vec<isize> =
            (0..self.labels.len()).filter(|&i| !keep.contains(&self.labels[i])).map(|i| i as isize).collect();
        if dims.is_empty() {
            return Ok(self);
        }
        let dtype = self.t.dtype();
        let t = self.t.sum(dims, false)?.to_dtype(dtype)?;
        let labels = self.labels.into_iter().filter(|l| keep.contains(l)).collect();
        Ok(Op { t, labels })
    }

    /// The tensor with dims in `order` (missing labels as size-1 dims) expanded to `sizes`.
    fn arranged(&self, order: &[Label], sizes: &[usize]) -> Result<Tensor> {
        let perm: Vec<usize> = order.iter().filter_map(|l| self.labels.iter().position(|x| x == l)).collect();
        let t = self.t.permute(perm)?;
        let shape: Vec<usize> = order.iter().map(|&l| self.size(l)).collect();
        t.reshape(shape)?.expand(sizes.to_vec())
    }
}

/// Contracts two operands, keeping the labels in `needed`.
fn contract(a: Op, b: Op, needed: &[Label]) -> Result<Op> {
    let keep_a: Vec<Label> =
        a.labels.iter().copied().filter(|l| needed.contains(l) || b.labels.contains(l)).collect();
    let keep_b: Vec<Label> =
        b.labels.iter().copied().filter(|l| needed.contains(l) || a.labels.contains(l)).collect();
    let (a, b) = (a.sum_except(&keep_a)?, b.sum_except(&keep_b)?);
    let both = |l: &Label| a.labels.contains(l) && b.labels.contains(l);
    let batch: Vec<Label> = a.labels.iter().copied().filter(|l| both(l) && needed.contains(l)).collect();
    let contr: Vec<Label> = a.labels.iter().copied().filter(|l| both(l) && !needed.contains(l)).collect();
    let fa: Vec<Label> = a.labels.iter().copied().filter(|l| !b.labels.contains(l)).collect();
    let fb: Vec<Label> = b.labels.iter().copied().filter(|l| !a.labels.contains(l)).collect();
    let size = |l: Label| -> Result<usize> {
        let (x, y) = (a.size(l), b.size(l));
        if x != y && x != 1 && y != 1 {
            return Err(err(format!(
                "operands do not broadcast: subscript {} has sizes {x} and {y}",
                name(l)
            )));
        }
        Ok(if x == 1 { y } else { x })
    };
    let sizes = |ls: &[Label]| ls.iter().map(|&l| size(l)).collect::<Result<Vec<usize>>>();
    let (sbatch, scontr) = (sizes(&batch)?, sizes(&contr)?);
    let (sfa, sfb) = (sizes(&fa)?, sizes(&fb)?);
    let cat = |x: &[Label], y: &[Label], z: &[Label]| -> Vec<Label> {
        x.iter().chain(y).chain(z).copied().collect()
    };
    let catn = |x: &[usize], y: &[usize], z: &[usize]| -> Vec<usize> {
        x.iter().chain(y).chain(z).copied().collect()
    };
    let ta = a.arranged(&cat(&batch, &fa, &contr), &catn(&sbatch, &sfa, &scontr))?;
    let tb = b.arranged(&cat(&batch, &contr, &fb), &catn(&sbatch, &scontr, &sfb))?;
    let (nb, m, k, n) = (
        sbatch.iter().product::<usize>(),
        sfa.iter().product::<usize>(),
        scontr.iter().product::<usize>(),
        sfb.iter().product::<usize>(),
    );
    let t = ta.reshape([nb, m, k])?.matmul(&tb.reshape([nb, k, n])?)?;
    Ok(Op { t: t.reshape(catn(&sbatch, &sfa, &sfb))?, labels: cat(&batch, &fa, &fb) })
}

/// Checks that every label has one size across operands, up to broadcasting size-1 dims.
fn check_broadcast(ops: &[Op]) -> Result<()> {
    let mut seen: Vec<(Label, usize)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        for (&l, &size) in op.labels.iter().zip(op.t.dims()) {
            match seen.iter_mut().find(|(k, _)| *k == l) {
                Some((_, s)) if *s != size && *s != 1 && size != 1 => {
                    return Err(err(format!(
                        "subscript {} has size {size} for operand {i} which does not broadcast with previously seen size {}",
                        name(l),
                        *s
                    )))
                }
                Some((_, s)) => *s = if *s == 1 { size } else { *s },
                None => seen.push((l, size)),
            }
        }
    }
    Ok(())
}

/// See [`Tensor::einsum`].
pub(super) fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
    if operands.is_empty() {
        return Err(err("must provide at least one operand"));
    }
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let terms: Vec<Term> = lhs.split(',').map(parse_term).collect::<Result<_>>()?;
    if terms.len() > operands.len() {
        return Err(err("fewer operands were provided than specified in the equation"));
    }
    if terms.len() < operands.len() {
        return Err(err("more operands were provided than specified in the equation"));
    }
    let dtype = operands[0].dtype();
    if let Some(o) = operands.iter().find(|o| o.dtype() != dtype) {
        return Err(Error::msg(format!(
            "expected scalar type {} but found {}",
            dtype.scalar_type_name(),
            o.dtype().scalar_type_name()
        )));
    }
    if dtype == DType::Bool {
        return Err(Error::UnsupportedDType { op: "bmm", dtype });
    }
    let compute = if dtype.is_float() { super::opmath(dtype) } else { DType::I64 };
    // Ellipsis dims per operand, and the most of them.
    let mut ell = Vec::with_capacity(terms.len());
    for (i, (t, x)) in terms.iter().zip(operands).enumerate() {
        let n = t.letters.len();
        match t.ellipsis {
            None if n != x.rank() => {
                return Err(err(format!(
                    "the number of subscripts in the equation ({n}) does not match the number of dimensions ({}) for operand {i} and no ellipsis was given",
                    x.rank()
                )))
            }
            Some(_) if n > x.rank() => {
                return Err(err(format!(
                    "the number of subscripts in the equation ({n}) is more than the number of dimensions ({}) for operand {i}",
                    x.rank()
                )))
            }
            _ => ell.push(x.rank() - n),
        }
    }
    let max_ell = ell.iter().copied().max().unwrap_or(0);
    let labels: Vec<Vec<Label>> = terms.iter().zip(&ell).map(|(t, &e)| labels_of(t, e, max_ell)).collect();
    let output: Vec<Label> = match rhs {
        Some(r) => {
            let t = parse_term(r)?;
            for (i, &l) in t.letters.iter().enumerate() {
                if t.letters[..i].contains(&l) {
                    return Err(err(format!(
                        "output subscript {} appears more than once in the output",
                        name(l)
                    )));
                }
                if !labels.iter().flatten().any(|&x| x == l) {
                    return Err(err(format!(
                        "output subscript {} does not appear in the equation for any input operand",
                        name(l)
                    )));
                }
            }
            labels_of(&t, if t.ellipsis.is_some() { max_ell } else { 0 }, max_ell)
        }
        None => {
            let mut out: Vec<Label> = (0..max_ell).map(|i| ELLIPSIS + i as Label).collect();
            let mut once: Vec<Label> = labels
                .iter()
                .flatten()
                .copied()
                .filter(|&l| l < ELLIPSIS && labels.iter().flatten().filter(|&&x| x == l).count() == 1)
                .collect();
            once.sort_unstable();
            out.extend(once);
            out
        }
    };
    let mut ops = Vec::with_capacity(operands.len());
    for (i, (x, ls)) in operands.iter().zip(labels).enumerate() {
        ops.push(Op::new(x.to_dtype(compute)?, ls, i)?);
    }
    check_broadcast(&ops)?;
    let mut iter = ops.into_iter();
    let mut acc = iter.next().expect("one operand at least");
    let rest: Vec<Op> = iter.collect();
    for (i, b) in rest.iter().enumerate() {
        let mut needed = output.clone();
        needed.extend(rest[i + 1..].iter().flat_map(|o| o.labels.iter().copied()));
        let b = Op { t: b.t.clone(), labels: b.labels.clone() };
        acc = contract(acc, b, &needed)?;
    }
    let acc = acc.sum_except(&output)?;
    let sizes: Vec<usize> = output.iter().map(|&l| acc.size(l)).collect();
    acc.arranged(&output, &sizes)?.contiguous()?.to_dtype(dtype)
}
