//! `torch.optim.LBFGS`: limited-memory BFGS over all parameters flattened into one vector, with a
//! fixed step or torch's strong-Wolfe line search, ported operation by operation from
//! `torch/optim/lbfgs.py` (float64 problems follow torch's trajectory to rounding).

use oxtorch_autograd::{enable_grad, no_grad};
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::{Optimizer, OptimizerState};

/// LBFGS hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct LbfgsOptions {
    /// learning rate (default 1)
    pub lr: f64,
    /// most iterations per [`LBFGS::step`] (default 20)
    pub max_iter: usize,
    /// most function evaluations per step (`None`: `max_iter * 5 / 4`, torch's default)
    pub max_eval: Option<usize>,
    /// stop when the largest gradient element is at most this (default 1e-7)
    pub tolerance_grad: f64,
    /// stop when the loss or the parameters change less than this (default 1e-9)
    pub tolerance_change: f64,
    /// number of curvature pairs kept (default 100)
    pub history_size: usize,
    /// `None` (a fixed step of `lr`) or `Some("strong_wolfe")`; another name is torch's error at
    /// the first step that would search
    pub line_search_fn: Option<&'static str>,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            lr: 1.0,
            max_iter: 20,
            max_eval: None,
            tolerance_grad: 1e-7,
            tolerance_change: 1e-9,
            history_size: 100,
            line_search_fn: None,
            maximize: false,
        }
    }
}

/// What torch keeps in `state[params[0]]` between steps.
#[derive(Default)]
struct LbfgsState {
    func_evals: usize,
    n_iter: usize,
    /// the last search direction
    d: Option<Tensor>,
    /// the last step length
    t: Option<f64>,
    old_dirs: Vec<Tensor>,
    old_stps: Vec<Tensor>,
    /// `1 / (y · s)` of each pair, 0-d tensors (as torch's list of tensors)
    ro: Vec<Tensor>,
    /// the initial inverse-Hessian scale (torch's `H_diag`, 1 before any curvature pair), 0-d
    h_diag: Option<Tensor>,
    prev_flat_grad: Option<Tensor>,
    prev_loss: Option<f64>,
}

/// L-BFGS (torch's `LBFGS`): one parameter group, driven by a closure that clears the gradients,
/// re-evaluates the model, calls `backward` and returns the loss.
///
/// ```
/// use oxtorch_nn::optim::{LbfgsOptions, LBFGS};
/// use oxtorch_tensor::{Result, Tensor};
/// # fn main() -> Result<()> {
/// let x = Tensor::from_vec(vec![3.0f64, -2.0], [2])?.requires_grad_(true)?;
/// let mut opt = LBFGS::new(vec![x.clone()], LbfgsOptions::default())?;
/// let loss = opt.step(|| {
///     x.set_grad(None)?; // (the optimizer is borrowed by `step`: clear through the parameters)
///     let loss = x.sub(1.0)?.square()?.sum_all()?;
///     loss.backward()?;
///     Ok(loss)
/// })?;
/// assert_eq!(loss.item::<f64>()?, 13.0);
/// assert!(x.sub(1.0)?.abs()?.max()?.item::<f64>()? < 1e-6);
/// # Ok(()) }
/// ```
pub struct LBFGS {
    params: Vec<Tensor>,
    options: LbfgsOptions,
    /// the group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lr: Option<f64>,
    state: LbfgsState,
}

impl LBFGS {
    /// torch's `LBFGS(params, lr, max_iter, max_eval, tolerance_grad, tolerance_change,
    /// history_size, line_search_fn, maximize=...)`, with torch's errors.
    pub fn new(params: Vec<Tensor>, options: LbfgsOptions) -> Result<Self> {
        if options.lr < 0.0 || options.lr.is_nan() {
            return Err(Error::msg(format!("Invalid learning rate: {}", options.lr)));
        }
        if params.is_empty() {
            return Err(Error::msg("optimizer got an empty parameter list"));
        }
        Ok(LBFGS { params, options, initial_lr: None, state: LbfgsState::default() })
    }

    /// The options in use.
    pub fn options(&self) -> &LbfgsOptions {
        &self.options
    }

    /// Function evaluations since the optimizer was made (torch's `state["func_evals"]`).
    pub fn func_evals(&self) -> usize {
        self.state.func_evals
    }

    /// Iterations since the optimizer was made (torch's `state["n_iter"]`).
    pub fn n_iter(&self) -> usize {
        self.state.n_iter
    }

    /// One optimisation step of up to `max_iter` iterations (torch's `step(closure)`): the
    /// closure is called with gradients enabled, each time the loss must be re-evaluated; it
    /// must clear the gradients (through the parameters or the model, as the optimizer is
    /// borrowed), compute the loss, call `backward` and return the loss. Returns the loss of the
    /// first evaluation, as torch.
    pub fn step(&mut self, mut closure: impl FnMut() -> Result<Tensor>) -> Result<Tensor> {
        let _end = super::StepEnd;
        let mut state = std::mem::take(&mut self.state);
        let result = self.run(&mut state, &mut closure);
        self.state = state;
        result
    }

    fn max_eval(&self) -> usize {
        self.options.max_eval.unwrap_or(self.options.max_iter * 5 / 4)
    }

    /// The loss as the algorithm sees it (negated when maximising).
    fn signed(&self, loss: f64) -> f64 {
        if self.options.maximize {
            -loss
        } else {
            loss
        }
    }

    /// torch's `step` body (`_params`, `state`, the closure).
    fn run(&self, st: &mut LbfgsState, closure: &mut dyn FnMut() -> Result<Tensor>) -> Result<Tensor> {
        let o = self.options;
        let max_eval = self.max_eval();
        let orig_loss = enable_grad(&mut *closure)?;
        let mut loss = self.signed(orig_loss.item::<f64>()?);
        let mut current_evals = 1;
        st.func_evals += 1;
        let mut flat_grad = self.gather_flat_grad()?;
        let mut opt_cond = abs_max(&flat_grad)? <= o.tolerance_grad;
        if opt_cond {
            return Ok(orig_loss);
        }
        // torch's locals, read from the state and written back at the end
        // (a clone, not a take: an error from the closure mid-step leaves the state usable)
        let mut d = st.d.clone();
        let mut t = st.t;
        let mut prev_loss = st.prev_loss;
        let mut n_iter = 0;
        while n_iter < o.max_iter {
            n_iter += 1;
            st.n_iter += 1;
            // the descent direction
            let dir = if st.n_iter == 1 {
                st.old_dirs.clear();
                st.old_stps.clear();
                st.ro.clear();
                st.h_diag = Some(Tensor::scalar_tensor(1.0, (flat_grad.dtype(), flat_grad.device()))?);
                flat_grad.neg()?
            } else {
                self.direction(st, &flat_grad, d.as_ref(), t)?
            };
            // the previous gradient (a copy, as torch's clone)
            st.prev_flat_grad = Some(flat_grad.copy()?);
            prev_loss = Some(loss);
            // the step length
            let mut step = if st.n_iter == 1 {
                let inv = 1.0 / flat_grad.abs()?.sum_all()?.item::<f64>()?;
                // Python's min(1.0, inv)
                (if inv < 1.0 { inv } else { 1.0 }) * o.lr
            } else {
                o.lr
            };
            let gtd = dot(&flat_grad, &dir)?;
            d = Some(dir.clone());
            t = Some(step);
            if gtd > -o.tolerance_change {
                break;
            }
            let mut ls_func_evals = 0;
            if let Some(name) = o.line_search_fn {
                if name != "strong_wolfe" {
                    return Err(Error::msg("only 'strong_wolfe' is supported"));
                }
                let x_init = self.clone_params()?;
                let max_ls = max_eval as i64 - current_evals as i64;
                let mut obj =
                    |x: &[Tensor], t: f64, d: &Tensor| self.directional_evaluate(&mut *closure, x, t, d);
                let search = WolfeStart { x: &x_init, t: step, d: &dir, f: loss, g: &flat_grad, gtd };
                let (f_new, g_new, t_new, evals) =
                    strong_wolfe(&mut obj, &search, o.tolerance_change, max_ls)?;
                loss = f_new;
                flat_grad = g_new;
                step = t_new;
                t = Some(step);
                ls_func_evals = evals;
                self.add_grad(step, &dir)?;
                opt_cond = abs_max(&flat_grad)? <= o.tolerance_grad;
            } else {
                self.add_grad(step, &dir)?;
                if n_iter != o.max_iter {
                    loss = self.signed(enable_grad(&mut *closure)?.item::<f64>()?);
                    flat_grad = self.gather_flat_grad()?;
                    opt_cond = abs_max(&flat_grad)? <= o.tolerance_grad;
                    ls_func_evals = 1;
                }
            }
            current_evals += ls_func_evals;
            st.func_evals += ls_func_evals;
            // the stopping conditions, in torch's order
            if n_iter == o.max_iter || current_evals >= max_eval || opt_cond {
                break;
            }
            if abs_max(&dir.mul(step)?)? <= o.tolerance_change {
                break;
            }
            if (loss - prev_loss.unwrap_or(loss)).abs() < o.tolerance_change {
                break;
            }
        }
        st.d = d;
        st.t = t;
        st.prev_loss = prev_loss;
        Ok(orig_loss)
    }

    /// The L-BFGS two-loop recursion after updating the curvature history with the last step, in
    /// tensor ops: `ys`, `ro`, `H_diag` and the recursion's coefficients stay 0-d tensors on the
    /// parameters' device (computed in their dtype, as torch's), and the one number read back is
    /// the test `ys > 1e-10` (torch reads it too; it also reads each coefficient, as an `alpha`).
    fn direction(
        &self,
        st: &mut LbfgsState,
        flat_grad: &Tensor,
        d: Option<&Tensor>,
        t: Option<f64>,
    ) -> Result<Tensor> {
        let missing = || Error::msg("LBFGS: the state lacks the previous step (load a complete state dict)");
        let (Some(d), Some(t), Some(prev)) = (d, t, st.prev_flat_grad.as_ref()) else {
            return Err(missing());
        };
        let y = flat_grad.sub(prev)?;
        let s = d.mul(t)?;
        let ys = y.dot(&s)?;
        if ys.gt(1e-10)?.item::<bool>()? {
            // the history is full: drop the oldest pair
            if st.old_dirs.len() == self.options.history_size {
                if st.old_dirs.is_empty() {
                    return Err(Error::msg("pop from empty list"));
                }
                st.old_dirs.remove(0);
                st.old_stps.remove(0);
                st.ro.remove(0);
            }
            st.ro.push(ys.reciprocal()?);
            st.h_diag = Some(ys.div(&y.dot(&y)?)?);
            st.old_dirs.push(y);
            st.old_stps.push(s);
        }
        let pairs = || st.old_stps.iter().zip(&st.old_dirs).zip(&st.ro);
        // newest pair first: al[i] = ro[i] s[i]·q, q -= al[i] y[i]
        let mut al: Vec<Tensor> = Vec::with_capacity(st.ro.len());
        let mut q = flat_grad.neg()?;
        for ((s, y), ro) in pairs().rev() {
            let a = s.dot(&q)?.mul(ro)?;
            q = q.add(&y.mul(&a.neg()?)?)?;
            al.push(a);
        }
        al.reverse();
        let mut r = match &st.h_diag {
            Some(h) => q.mul(h)?,
            None => q,
        };
        // oldest pair first: r += (al[i] - ro[i] y[i]·r) s[i]
        for (((s, y), ro), a) in pairs().zip(&al) {
            let be_i = y.dot(&r)?.mul(ro)?;
            r = r.add(&s.mul(&a.sub(&be_i)?)?)?;
        }
        Ok(r)
    }

    /// Every parameter's gradient flattened into one vector (zeros for a parameter without one),
    /// negated when maximising (torch's `_gather_flat_grad`).
    fn gather_flat_grad(&self) -> Result<Tensor> {
        no_grad(|| {
            let views = self
                .params
                .iter()
                .map(|p| match p.grad() {
                    Some(g) => g.reshape([-1isize]),
                    None => p.detach().zeros_like()?.reshape([-1isize]),
                })
                .collect::<Result<Vec<Tensor>>>()?;
            let refs: Vec<&Tensor> = views.iter().collect();
            // a fresh tensor, never a view of a gradient
            let flat = if refs.len() == 1 { refs[0].copy()? } else { Tensor::cat(&refs, 0)? };
            if self.options.maximize {
                flat.neg()
            } else {
                Ok(flat)
            }
        })
    }

    /// `p += step * update[slice of p]` for every parameter (torch's `_add_grad`).
    fn add_grad(&self, step: f64, update: &Tensor) -> Result<()> {
        no_grad(|| {
            let mut offset = 0;
            for p in &self.params {
                let n = p.numel();
                let part = update.narrow(0, offset as isize, n)?.reshape(p.dims())?;
                p.add_(&part.mul(step)?)?;
                offset += n;
            }
            Ok(())
        })
    }

    /// Copies of the parameters (torch's `_clone_param`).
    fn clone_params(&self) -> Result<Vec<Tensor>> {
        no_grad(|| self.params.iter().map(|p| p.detach().copy()).collect())
    }

    /// Restores the parameters from [`LBFGS::clone_params`]'s copies (torch's `_set_param`).
    fn set_params(&self, values: &[Tensor]) -> Result<()> {
        no_grad(|| {
            for (p, v) in self.params.iter().zip(values) {
                p.copy_(v)?;
            }
            Ok(())
        })
    }

    /// The loss and flat gradient at `x + t d`, the parameters put back to `x` afterwards
    /// (torch's `_directional_evaluate`).
    fn directional_evaluate(
        &self,
        closure: &mut dyn FnMut() -> Result<Tensor>,
        x: &[Tensor],
        t: f64,
        d: &Tensor,
    ) -> Result<(f64, Tensor)> {
        self.add_grad(t, d)?;
        let loss = self.signed(enable_grad(closure)?.item::<f64>()?);
        let flat_grad = self.gather_flat_grad()?;
        self.set_params(x)?;
        Ok((loss, flat_grad))
    }
}

/// `a · b` as a number.
fn dot(a: &Tensor, b: &Tensor) -> Result<f64> {
    a.dot(b)?.item::<f64>()
}

/// The largest absolute element.
fn abs_max(t: &Tensor) -> Result<f64> {
    t.abs()?.max()?.item::<f64>()
}

/// Python's `max(a, b)` (the first unless the second is larger).
fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Python's `min(a, b)` (the first unless the second is smaller).
fn py_min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// The minimiser of the cubic through `(x1, f1)`, `(x2, f2)` with slopes `g1`, `g2`, clamped to
/// `bounds` (default: the interval between the points), or the interval's middle when the cubic
/// has no minimum (torch's `_cubic_interpolate`).
fn cubic_interpolate(
    x1: f64,
    f1: f64,
    g1: f64,
    x2: f64,
    f2: f64,
    g2: f64,
    bounds: Option<(f64, f64)>,
) -> f64 {
    let (xmin_bound, xmax_bound) = bounds.unwrap_or(if x1 <= x2 { (x1, x2) } else { (x2, x1) });
    let d1 = g1 + g2 - 3.0 * (f1 - f2) / (x1 - x2);
    let d2_square = d1 * d1 - g1 * g2;
    if d2_square >= 0.0 {
        let d2 = d2_square.sqrt();
        let min_pos = if x1 <= x2 {
            x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2.0 * d2))
        } else {
            x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2.0 * d2))
        };
        py_min(py_max(min_pos, xmin_bound), xmax_bound)
    } else {
        (xmin_bound + xmax_bound) / 2.0
    }
}

/// Where a line search starts: the parameters `x`, the first step `t` along `d`, the loss `f`,
/// gradient `g` and directional derivative `gtd` at `x`.
struct WolfeStart<'a> {
    x: &'a [Tensor],
    t: f64,
    d: &'a Tensor,
    f: f64,
    g: &'a Tensor,
    gtd: f64,
}

/// The loss and flat gradient at `x + t d`.
type Objective<'o> = dyn FnMut(&[Tensor], f64, &Tensor) -> Result<(f64, Tensor)> + 'o;

/// A line-search bracket: its step sizes, their losses, gradients and directional derivatives.
type Bracket = (Vec<f64>, Vec<f64>, Vec<Tensor>, Vec<f64>);

/// torch's `_strong_wolfe` (`c1 = 1e-4`, `c2 = 0.9`): a bracketing phase, then a zoom phase
/// by cubic interpolation. Returns the loss, gradient and step at the point found, and the
/// number of evaluations.
fn strong_wolfe(
    obj: &mut Objective<'_>,
    s: &WolfeStart<'_>,
    tolerance_change: f64,
    max_ls: i64,
) -> Result<(f64, Tensor, f64, usize)> {
    let (c1, c2) = (1e-4, 0.9);
    let (f, gtd) = (s.f, s.gtd);
    let mut t = s.t;
    let d_norm = abs_max(s.d)?;
    let g = s.g.copy()?;
    let (mut f_new, mut g_new) = obj(s.x, t, s.d)?;
    let mut ls_func_evals = 1;
    let mut gtd_new = dot(&g_new, s.d)?;
    let (mut t_prev, mut f_prev, mut g_prev, mut gtd_prev) = (0.0, f, g.clone(), gtd);
    let mut done = false;
    let mut ls_iter = 0;
    let mut found: Option<Bracket> = None;
    while ls_iter < max_ls {
        if f_new > (f + c1 * t * gtd) || (ls_iter > 1 && f_new >= f_prev) {
            found = Some((
                vec![t_prev, t],
                vec![f_prev, f_new],
                vec![g_prev, g_new.copy()?],
                vec![gtd_prev, gtd_new],
            ));
            break;
        }
        if gtd_new.abs() <= -c2 * gtd {
            found = Some((vec![t], vec![f_new], vec![g_new.clone()], vec![gtd_new]));
            done = true;
            break;
        }
        if gtd_new >= 0.0 {
            found = Some((
                vec![t_prev, t],
                vec![f_prev, f_new],
                vec![g_prev, g_new.copy()?],
                vec![gtd_prev, gtd_new],
            ));
            break;
        }
        // interpolate
        let min_step = t + 0.01 * (t - t_prev);
        let max_step = t * 10.0;
        let tmp = t;
        t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, Some((min_step, max_step)));
        t_prev = tmp;
        f_prev = f_new;
        g_prev = g_new.copy()?;
        gtd_prev = gtd_new;
        (f_new, g_new) = obj(s.x, t, s.d)?;
        ls_func_evals += 1;
        gtd_new = dot(&g_new, s.d)?;
        ls_iter += 1;
    }
    // reached the most evaluations
    if ls_iter == max_ls {
        found = Some((vec![0.0, t], vec![f, f_new], vec![g, g_new.clone()], vec![gtd, gtd_new]));
    }
    let Some((mut bracket, mut bracket_f, mut bracket_g, mut bracket_gtd)) = found else {
        // (torch fails here too, reading an unset bracket)
        return Err(Error::msg("LBFGS: no evaluation left for the line search (raise max_eval)"));
    };
    // zoom phase: a point satisfying the criteria lies in the bracket
    let mut insuf_progress = false;
    let order = |bf: &[f64]| -> (usize, usize) {
        if bf[0] <= bf[bf.len() - 1] {
            (0, 1)
        } else {
            (1, 0)
        }
    };
    let (mut low_pos, mut high_pos) = order(&bracket_f[..]);
    while !done && ls_iter < max_ls {
        // a bracket too small to matter
        if (bracket[1] - bracket[0]).abs() * d_norm < tolerance_change {
            break;
        }
        t = cubic_interpolate(
            bracket[0],
            bracket_f[0],
            bracket_gtd[0],
            bracket[1],
            bracket_f[1],
            bracket_gtd[1],
            None,
        );
        let (b_max, b_min) = (py_max(bracket[0], bracket[1]), py_min(bracket[0], bracket[1]));
        let eps = 0.1 * (b_max - b_min);
        if py_min(b_max - t, t - b_min) < eps {
            // too close to a boundary: move away unless progress was made
            if insuf_progress || t >= b_max || t <= b_min {
                t = if (t - b_max).abs() < (t - b_min).abs() { b_max - eps } else { b_min + eps };
                insuf_progress = false;
            } else {
                insuf_progress = true;
            }
        } else {
            insuf_progress = false;
        }
        (f_new, g_new) = obj(s.x, t, s.d)?;
        ls_func_evals += 1;
        gtd_new = dot(&g_new, s.d)?;
        ls_iter += 1;
        if f_new > (f + c1 * t * gtd) || f_new >= bracket_f[low_pos] {
            // Armijo condition not satisfied, or not lower than the lowest point
            bracket[high_pos] = t;
            bracket_f[high_pos] = f_new;
            bracket_g[high_pos] = g_new.copy()?;
            bracket_gtd[high_pos] = gtd_new;
            (low_pos, high_pos) = order(&bracket_f[..]);
        } else {
            if gtd_new.abs() <= -c2 * gtd {
                // Wolfe conditions satisfied
                done = true;
            } else if gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0.0 {
                // the old high becomes the new low
                bracket[high_pos] = bracket[low_pos];
                bracket_f[high_pos] = bracket_f[low_pos];
                bracket_g[high_pos] = bracket_g[low_pos].clone();
                bracket_gtd[high_pos] = bracket_gtd[low_pos];
            }
            // the new point becomes the new low
            bracket[low_pos] = t;
            bracket_f[low_pos] = f_new;
            bracket_g[low_pos] = g_new.copy()?;
            bracket_gtd[low_pos] = gtd_new;
        }
    }
    let low = low_pos;
    Ok((bracket_f[low], bracket_g.swap_remove(low), bracket[low], ls_func_evals))
}

impl Optimizer for LBFGS {
    /// torch's `LBFGS.step(closure)` through the trait: the inherent [`LBFGS::step`].
    fn step_with_closure(&mut self, closure: &mut dyn FnMut() -> Result<Tensor>) -> Result<Option<Tensor>> {
        LBFGS::step(self, closure).map(Some)
    }

    /// LBFGS needs a closure: this is torch's error for `step()` without one (use
    /// [`LBFGS::step`], the inherent method, which takes it).
    fn step(&mut self) -> Result<()> {
        Err(Error::msg("LBFGS.step() missing 1 required positional argument: 'closure'"))
    }

    fn zero_grad(&mut self) -> Result<()> {
        self.params.iter().try_for_each(|p| p.set_grad(None))
    }

    fn num_groups(&self) -> usize {
        1
    }

    fn group_params(&self, _group: usize) -> Vec<Tensor> {
        self.params.clone()
    }

    fn group_len(&self, _group: usize) -> Option<usize> {
        Some(self.params.len())
    }

    fn lr(&self, _group: usize) -> f64 {
        self.options.lr
    }

    fn set_lr(&mut self, _group: usize, lr: f64) {
        self.options.lr = lr;
    }

    fn initial_lr(&self, _group: usize) -> Option<f64> {
        self.initial_lr
    }

    fn set_initial_lr(&mut self, _group: usize, lr: f64) {
        self.initial_lr = Some(lr);
    }

    fn hyper_params(&self, _group: usize) -> Vec<(String, f64)> {
        let o = &self.options;
        vec![
            ("lr".to_string(), o.lr),
            ("max_iter".to_string(), o.max_iter as f64),
            ("max_eval".to_string(), self.max_eval() as f64),
            ("tolerance_grad".to_string(), o.tolerance_grad),
            ("tolerance_change".to_string(), o.tolerance_change),
            ("history_size".to_string(), o.history_size as f64),
            ("maximize".to_string(), f64::from(u8::from(o.maximize))),
        ]
    }

    fn set_hyper_param(&mut self, _group: usize, name: &str, value: f64) {
        let o = &mut self.options;
        match name {
            "lr" => o.lr = value,
            "max_iter" => o.max_iter = value as usize,
            "max_eval" => o.max_eval = Some(value as usize),
            "tolerance_grad" => o.tolerance_grad = value,
            "tolerance_change" => o.tolerance_change = value,
            "history_size" => o.history_size = value as usize,
            "maximize" => o.maximize = value != 0.0,
            _ => {}
        }
    }

    /// torch's state under `state.0.*` (the first parameter's): `func_evals` and `n_iter` (int64),
    /// `d`, `t`, `old_dirs.{i}`, `old_stps.{i}`, `ro.{i}`, `H_diag`, `prev_flat_grad`,
    /// `prev_loss` (numbers as float64 0-d tensors; torch's scratch list `al` is not kept), and
    /// the hyper-parameters (`line_search_fn` is not a number and stays with the optimizer).
    fn state_dict(&self) -> Result<OptimizerState> {
        let mut s = OptimizerState::default();
        let st = &self.state;
        if st.func_evals > 0 {
            let number = |v: f64| Tensor::scalar_tensor(v, DType::F64);
            s.set_tensor(0, "func_evals", &Tensor::scalar_tensor(st.func_evals as i64, DType::I64)?)?;
            s.set_tensor(0, "n_iter", &Tensor::scalar_tensor(st.n_iter as i64, DType::I64)?)?;
            if let Some(d) = &st.d {
                s.set_tensor(0, "d", d)?;
            }
            if let Some(t) = st.t {
                s.set_tensor(0, "t", &number(t)?)?;
            }
            if let Some(h) = &st.h_diag {
                s.set_tensor(0, "H_diag", &h.to_dtype(DType::F64)?)?;
            }
            if let Some(l) = st.prev_loss {
                s.set_tensor(0, "prev_loss", &number(l)?)?;
            }
            for (i, ((y, step), ro)) in st.old_dirs.iter().zip(&st.old_stps).zip(&st.ro).enumerate() {
                s.set_tensor(0, &format!("old_dirs.{i}"), y)?;
                s.set_tensor(0, &format!("old_stps.{i}"), step)?;
                s.set_tensor(0, &format!("ro.{i}"), &ro.to_dtype(DType::F64)?)?;
            }
            if let Some(g) = &st.prev_flat_grad {
                s.set_tensor(0, "prev_flat_grad", g)?;
            }
        }
        super::save_lrs(self, &mut s);
        Ok(s)
    }

    fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()> {
        super::check_groups(self, state)?;
        let first = self.params[0].clone();
        let tensor = |name: &str| -> Result<Option<Tensor>> {
            state.tensor(0, name).map(|t| super::state::state_for(t, &first)).transpose()
        };
        let number = |name: &str| -> Result<Option<f64>> {
            state.tensor(0, name).map(|t| t.item::<f64>()).transpose()
        };
        let mut st = LbfgsState {
            func_evals: number("func_evals")?.unwrap_or(0.0) as usize,
            n_iter: number("n_iter")?.unwrap_or(0.0) as usize,
            d: tensor("d")?,
            t: number("t")?,
            h_diag: tensor("H_diag")?,
            prev_flat_grad: tensor("prev_flat_grad")?,
            prev_loss: number("prev_loss")?,
            ..LbfgsState::default()
        };
        let mut i = 0;
        while let (Some(y), Some(s), Some(ro)) = (
            tensor(&format!("old_dirs.{i}"))?,
            tensor(&format!("old_stps.{i}"))?,
            tensor(&format!("ro.{i}"))?,
        ) {
            st.old_dirs.push(y);
            st.old_stps.push(s);
            st.ro.push(ro);
            i += 1;
        }
        self.state = st;
        super::load_lrs(self, state);
        Ok(())
    }

    fn add_param_group(&mut self, _params: Vec<Tensor>, _options: &[(&str, f64)]) -> Result<()> {
        Err(Error::msg("LBFGS doesn't support per-parameter options (parameter groups)"))
    }
}
