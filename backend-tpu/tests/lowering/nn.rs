//! Im2col, Col2im, MaxPool, AvgPool, Resample (embedding is in `index`).

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::DType;

use crate::harness::{random, Checker, Mix, FLOATS, INTS};

type Tap = (isize, usize, usize, usize);

/// `(image, kernel, stride, padding, dilation)`.
type ConvCase = (Vec<usize>, Vec<usize>, Vec<usize>, Vec<usize>, Vec<usize>);

/// torch's regular windows along a dim of `size`: kernel `k`, stride `s`, padding `p`, dilation `d`
/// (`count_pad`: the divisor counts padded positions).
fn windows(size: usize, k: usize, s: usize, p: usize, d: usize, count_pad: bool) -> Vec<Tap> {
    let n = NnOp::window_positions(size, k, s, p, d);
    (0..n)
        .map(|o| {
            let start = (o * s) as isize - p as isize;
            let inside = (0..k).filter(|j| {
                let i = start + (j * d) as isize;
                i >= 0 && (i as usize) < size
            });
            (start, d, k, if count_pad { k } else { inside.count() })
        })
        .collect()
}

/// Adaptive windows (varied lengths) plus one window entirely outside the input.
fn adaptive(size: usize, out: usize) -> Vec<Tap> {
    let mut t: Vec<Tap> = (0..out)
        .map(|o| {
            let a = o * size / out;
            let b = ((o + 1) * size).div_ceil(out);
            (a as isize, 1, b - a, b - a)
        })
        .collect();
    t.push((size as isize + 2, 1, 2, 2));
    t
}

#[test]
fn pools() {
    let Some(mut c) = Checker::new() else { return };
    let tap_sets: Vec<(Vec<usize>, Vec<Vec<Tap>>)> = vec![
        (vec![2, 7], vec![windows(7, 3, 2, 1, 1, true)]),
        (vec![2, 3, 6, 5], vec![windows(6, 2, 2, 0, 1, true), windows(5, 3, 1, 1, 2, false)]),
        (vec![1, 2, 5, 7], vec![adaptive(5, 3), adaptive(7, 4)]),
        (
            vec![2, 4, 3, 5],
            vec![windows(4, 2, 1, 1, 1, false), windows(3, 2, 2, 1, 1, true), windows(5, 3, 2, 0, 1, true)],
        ),
    ];
    for (t, (dims, taps)) in tap_sets.iter().enumerate() {
        for (k, dtype) in FLOATS.into_iter().chain(INTS).enumerate() {
            for (m, mix) in [Mix::Specials, Mix::Ties, Mix::Plain].into_iter().enumerate() {
                let x = random(dtype, dims, (t * 100 + k * 10 + m) as u64, mix);
                c.check(&Prim::Nn(NnOp::MaxPool { taps: taps.clone() }), std::slice::from_ref(&x));
                c.check(
                    &Prim::Nn(NnOp::AvgPool { taps: taps.clone(), divisor_override: None }),
                    std::slice::from_ref(&x),
                );
                c.check(
                    &Prim::Nn(NnOp::AvgPool { taps: taps.clone(), divisor_override: Some(3) }),
                    std::slice::from_ref(&x),
                );
            }
        }
    }
    let x = random(DType::Bool, &[2, 5], 1, Mix::Plain);
    c.check_or_refused(&Prim::Nn(NnOp::MaxPool { taps: vec![windows(5, 2, 1, 0, 1, true)] }), &[x], 1.0);
    c.finish();
}

#[test]
fn resample() {
    let Some(mut c) = Checker::new() else { return };
    let nearest: Vec<Vec<(usize, f64)>> = (0..7).map(|o| vec![(o * 4 / 7, 1.0)]).collect();
    let linear: Vec<Vec<(usize, f64)>> = (0..6)
        .map(|o| {
            let x = o as f64 * 4.0 / 5.0;
            let i = (x.floor() as usize).min(3);
            vec![(i, 1.0 - (x - i as f64)), ((i + 1).min(4), x - i as f64)]
        })
        .collect();
    let cubic: Vec<Vec<(usize, f64)>> = (0..3)
        .map(|o: usize| {
            (0..4usize).map(|j| ((o + j).saturating_sub(1).min(4), [-0.1, 0.6, 0.6, -0.1][j])).collect()
        })
        .collect();
    let cases = [
        (vec![2, 3, 5], vec![linear.clone()]),
        (vec![1, 2, 5, 5], vec![nearest.clone(), cubic.clone()]),
        (vec![2, 5, 5], vec![linear.clone(), nearest.clone()]),
    ];
    // Weights exact in binary, for integer images: their round-half-away rounding is then not at
    // the mercy of the last bit of the sum (XLA may contract multiply-adds into FMAs).
    let exact: Vec<Vec<(usize, f64)>> = (0..5usize)
        .map(|o| vec![(o.min(3), 0.75), ((o + 1).min(4), 0.25), (o.saturating_sub(1), 0.5)])
        .collect();
    for (t, (dims, taps)) in cases.iter().enumerate() {
        for (k, dtype) in FLOATS.into_iter().chain(INTS).enumerate() {
            let taps = if FLOATS.contains(&dtype) { taps.clone() } else { vec![exact.clone(); taps.len()] };
            for (m, mix) in [Mix::Specials, Mix::Plain].into_iter().enumerate() {
                let x = random(dtype, dims, (t * 100 + k * 10 + m) as u64, mix);
                c.check(&Prim::Nn(NnOp::Resample { taps: taps.clone() }), &[x]);
            }
        }
    }
    c.finish();
}

#[test]
fn im2col_and_col2im() {
    let Some(mut c) = Checker::new() else { return };
    // (image, kernel, stride, padding, dilation)
    let cases: Vec<ConvCase> = vec![
        (vec![7], vec![3], vec![1], vec![1], vec![1]),
        (vec![5, 6], vec![2, 3], vec![2, 1], vec![1, 0], vec![1, 2]),
        (vec![4, 4], vec![3, 3], vec![1, 1], vec![1, 1], vec![1, 1]),
        (vec![3, 4, 3], vec![2, 2, 1], vec![1, 2, 1], vec![0, 1, 1], vec![1, 1, 1]),
    ];
    for (t, (image, kernel, stride, padding, dilation)) in cases.iter().enumerate() {
        let mut dims = vec![2, 3];
        dims.extend(image);
        let grid: Vec<usize> = (0..kernel.len())
            .map(|d| NnOp::window_positions(image[d], kernel[d], stride[d], padding[d], dilation[d]))
            .collect();
        let k: usize = kernel.iter().product();
        let l: usize = grid.iter().product();
        for (n, dtype) in FLOATS.into_iter().chain(INTS).chain([DType::Bool]).enumerate() {
            let seed = (t * 100 + n) as u64;
            let x = random(dtype, &dims, seed, Mix::Specials);
            let im2col = NnOp::Im2col {
                kernel: kernel.clone(),
                stride: stride.clone(),
                padding: padding.clone(),
                dilation: dilation.clone(),
            };
            c.check(&Prim::Nn(im2col), &[x]);
            let cols = random(dtype, &[2, 3 * k, l], seed + 50, Mix::Plain);
            let col2im = NnOp::Col2im {
                output_size: image.clone(),
                grid: grid.clone(),
                kernel: kernel.clone(),
                stride: stride.clone(),
                padding: padding.clone(),
                dilation: dilation.clone(),
            };
            c.check_or_refused(&Prim::Nn(col2im), &[cols], 2.0);
        }
    }
    c.finish();
}
