//! Indexing and creation edge cases as torch 2.15 has them (`arange`/`linspace` bit for bit too): reduced-precision scatter sums and products
//! accumulated in f32, index_select on a 0-d tensor, 0-d index tensors of any signed integer type.

use oxtorch_tensor::{tensor, DType, Result, Tensor};

fn half(v: &[f64], dt: DType) -> Tensor {
    Tensor::from_vec(v.to_vec(), [v.len()]).unwrap().to_dtype(dt).unwrap()
}

/// `zeros(1, f16).scatter_add(0, [0, 0, 0], [2048, 1, 1])` is 2050 (torch sums in f32; per-step
/// rounding gives 2048), bf16 `256 + 1 + 1` is 258, the f16 product of ten 1.0009766 and five 1.3
/// is 3.74609375, index_add on a matrix sums in f32 (a vector's rounds each step: 2048), and
/// gather's gradient is 2050 too.
#[test]
fn reduced_precision_scatter_sums_round_once() -> Result<()> {
    let idx = Tensor::from_vec(vec![0i64; 3], [3])?;
    let out = Tensor::zeros([1], DType::F16)?.scatter_add(0, &idx, &half(&[2048.0, 1.0, 1.0], DType::F16))?;
    assert_eq!((out.dtype(), out.to_f64_vec()?), (DType::F16, vec![2050.0]));
    let out =
        Tensor::zeros([1], DType::BF16)?.scatter_add(0, &idx, &half(&[256.0, 1.0, 1.0], DType::BF16))?;
    assert_eq!(out.to_f64_vec()?, [258.0]);
    let factors: Vec<f64> = [1.0009766; 10].into_iter().chain([1.3; 5]).collect();
    let prod = Tensor::ones([1], DType::F16)?.scatter_reduce(
        0,
        &Tensor::zeros([15], DType::I64)?,
        &half(&factors, DType::F16),
        "prod",
        true,
    )?;
    assert_eq!(prod.to_f64_vec()?, [3.74609375]);
    let rows = half(&[2048.0, 2048.0, 1.0, 1.0, 1.0, 1.0], DType::F16).reshape([3, 2])?;
    let m = Tensor::zeros([1, 2], DType::F16)?.index_add(0, &idx, &rows, 1)?;
    assert_eq!(m.to_f64_vec()?, [2050.0, 2050.0]);
    let v = Tensor::zeros([2], DType::F16)?.index_add(0, &idx, &half(&[2048.0, 1.0, 1.0], DType::F16), 1)?;
    assert_eq!(v.to_f64_vec()?, [2048.0, 0.0]);
    let x = Tensor::zeros([1, 2], DType::F16)?.requires_grad_(true)?;
    x.gather(0, &Tensor::zeros([3, 2], DType::I64)?)?.backward_with(Some(&rows), false, false)?;
    assert_eq!(x.grad().unwrap().to_f64_vec()?, [2050.0, 2050.0]);
    Ok(())
}

/// `tensor(5.).index_select(0, [0])` is 0-d; two indices are torch's error.
#[test]
fn index_select_on_a_scalar_takes_one_index() -> Result<()> {
    let x = Tensor::scalar_tensor(5.0, DType::F32)?;
    let one = x.index_select(0, &Tensor::from_vec(vec![0i64], [1])?)?;
    assert_eq!((one.dims().to_vec(), one.to_f64_vec()?), (vec![], vec![5.0]));
    let e = x.index_select(0, &Tensor::from_vec(vec![0i64, 0], [2])?).unwrap_err().to_string();
    assert!(e.contains("Index to scalar can have only 1 value, got 2 value(s)"), "{e}");
    Ok(())
}

/// `arange(6.)[tensor(1, dtype=int16)]` is `tensor(1.)` (int8 too): a 0-d integer index of any
/// signed type selects.
#[test]
fn zero_dim_index_tensors_of_small_int_types_select() -> Result<()> {
    let x = tensor!([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    for dt in [DType::I8, DType::I16] {
        let ix = Tensor::scalar_tensor(1, dt)?;
        let y = x.i(&ix)?;
        assert_eq!((y.dims().to_vec(), y.to_f64_vec()?), (vec![], vec![1.0]), "{dt:?}");
    }
    Ok(())
}

/// torch 2.15's float32 `arange` (its kernel adds `j * step` to a float32 base per 8-lane group of
/// each 16-element block) and `linspace` (one fused multiply-add from each end, in the output
/// type), bit for bit: `arange(0, 30, 0.7)`, `arange(0.3, 7.1, 0.1)`, `linspace(-1.7, 3.3, 33)` in
/// float32 and float64, `linspace(0, 1, 7)`.
#[test]
fn arange_and_linspace_are_torchs_bit_for_bit() -> Result<()> {
    let f32s = |t: Tensor| t.to_f64_vec().unwrap();
    let arange = |s: f64, e: f64, st: f64| f32s(Tensor::arange_step(s, e, st, DType::F32).unwrap());
    let want: &[f64] = &[
        0.0,
        0.699999988079071,
        1.399999976158142,
        2.0999999046325684,
        2.799999952316284,
        3.5,
        4.199999809265137,
        4.900000095367432,
        5.599999904632568,
        6.299999713897705,
        7.0,
        7.699999809265137,
        8.399999618530273,
        9.100000381469727,
        9.800000190734863,
        10.5,
        11.199999809265137,
        11.899999618530273,
        12.59999942779541,
        13.300000190734863,
        14.0,
        14.699999809265137,
        15.399999618530273,
        16.100000381469727,
        16.799999237060547,
        17.5,
        18.19999885559082,
        18.899999618530273,
        19.599998474121094,
        20.299999237060547,
        21.0,
        21.69999885559082,
        22.399999618530273,
        23.100000381469727,
        23.799999237060547,
        24.5,
        25.200000762939453,
        25.899999618530273,
        26.600000381469727,
        27.299999237060547,
        28.0,
        28.700000762939453,
        29.399999618530273,
    ];
    assert_eq!(arange(0.0, 30.0, 0.7), want);
    let want: &[f64] = &[
        0.30000001192092896,
        0.4000000059604645,
        0.5,
        0.6000000238418579,
        0.699999988079071,
        0.800000011920929,
        0.9000000357627869,
        1.0,
        1.100000023841858,
        1.2000000476837158,
        1.3000000715255737,
        1.399999976158142,
        1.5,
        1.600000023841858,
        1.7000000476837158,
        1.8000000715255737,
        1.899999976158142,
        2.0,
        2.0999999046325684,
        2.200000047683716,
        2.299999952316284,
        2.4000000953674316,
        2.5,
        2.5999999046325684,
        2.700000047683716,
        2.799999952316284,
        2.9000000953674316,
        3.0,
        3.1000001430511475,
        3.200000047683716,
        3.299999952316284,
        3.4000000953674316,
        3.5,
        3.5999999046325684,
        3.700000047683716,
        3.799999952316284,
        3.9000000953674316,
        4.0,
        4.099999904632568,
        4.199999809265137,
        4.300000190734863,
        4.400000095367432,
        4.5,
        4.600000381469727,
        4.700000286102295,
        4.800000190734863,
        4.900000095367432,
        5.0,
        5.099999904632568,
        5.199999809265137,
        5.299999713897705,
        5.400000095367432,
        5.5,
        5.599999904632568,
        5.699999809265137,
        5.799999713897705,
        5.900000095367432,
        6.0,
        6.099999904632568,
        6.200000286102295,
        6.300000190734863,
        6.400000095367432,
        6.5,
        6.599999904632568,
        6.699999809265137,
        6.800000190734863,
        6.900000095367432,
        7.0,
    ];
    assert_eq!(arange(0.3, 7.1, 0.1), want);
    let want: &[f64] = &[
        -1.7000000476837158,
        -1.5437500476837158,
        -1.3875000476837158,
        -1.2312500476837158,
        -1.0750000476837158,
        -0.9187500476837158,
        -0.7625000476837158,
        -0.6062500476837158,
        -0.4500000476837158,
        -0.2937500476837158,
        -0.13750004768371582,
        0.01874995231628418,
        0.17499995231628418,
        0.3312499523162842,
        0.4874999523162842,
        0.6437499523162842,
        0.7999999523162842,
        0.9562499523162842,
        1.1124999523162842,
        1.2687499523162842,
        1.4249999523162842,
        1.5812499523162842,
        1.7374999523162842,
        1.8937499523162842,
        2.049999952316284,
        2.206249952316284,
        2.362499952316284,
        2.518749952316284,
        2.674999952316284,
        2.831249952316284,
        2.987499952316284,
        3.143749952316284,
        3.299999952316284,
    ];
    assert_eq!(f32s(Tensor::linspace(-1.7, 3.3, 33, DType::F32)?), want);
    let want: &[f64] =
        &[0.0, 0.1666666716337204, 0.3333333432674408, 0.5, 0.6666666269302368, 0.8333333134651184, 1.0];
    assert_eq!(f32s(Tensor::linspace(0.0, 1.0, 7, DType::F32)?), want);
    let want: &[f64] = &[
        -1.7,
        -1.54375,
        -1.3875,
        -1.23125,
        -1.075,
        -0.91875,
        -0.7625,
        -0.60625,
        -0.44999999999999996,
        -0.29374999999999996,
        -0.13749999999999996,
        0.018750000000000044,
        0.17500000000000004,
        0.33125000000000004,
        0.48750000000000004,
        0.64375,
        0.7999999999999998,
        0.9562499999999998,
        1.1124999999999998,
        1.2687499999999998,
        1.4249999999999998,
        1.5812499999999998,
        1.7374999999999998,
        1.8937499999999998,
        2.05,
        2.20625,
        2.3625,
        2.51875,
        2.675,
        2.83125,
        2.9875,
        3.14375,
        3.3,
    ];
    assert_eq!(f32s(Tensor::linspace(-1.7, 3.3, 33, DType::F64)?), want);
    // float64 `arange(-5.3, 50, 1.1)`: groups of 4 with fused multiply-adds, then the tail.
    let want: &[f64] = &[
        -5.3,
        -4.199999999999999,
        -3.0999999999999996,
        -1.9999999999999996,
        -0.8999999999999995,
        0.20000000000000062,
        1.3000000000000007,
        2.400000000000001,
        3.500000000000001,
        4.600000000000001,
        5.700000000000001,
        6.800000000000001,
        7.900000000000001,
        9.000000000000002,
        10.100000000000001,
        11.200000000000001,
        12.3,
        13.4,
        14.5,
        15.600000000000001,
        16.700000000000003,
        17.800000000000004,
        18.900000000000002,
        20.000000000000004,
        21.1,
        22.200000000000003,
        23.3,
        24.400000000000002,
        25.500000000000004,
        26.600000000000005,
        27.700000000000003,
        28.800000000000004,
        29.900000000000002,
        31.000000000000004,
        32.1,
        33.2,
        34.300000000000004,
        35.400000000000006,
        36.50000000000001,
        37.6,
        38.7,
        39.800000000000004,
        40.900000000000006,
        42.0,
        43.1,
        44.2,
        45.300000000000004,
        46.4,
        47.50000000000001,
        48.6,
        49.7,
    ];
    assert_eq!(f32s(Tensor::arange_step(-5.3, 50.0, 1.1, DType::F64)?), want);
    Ok(())
}

/// `zeros(1, 3, 1).squeeze((0, -3))` is torch's "dim 0 appears multiple times", `zeros(1).
/// unflatten(0, ())` its "sizes must be non-empty", and `all`/`any` over no dim reduce nothing
/// (`arange(6.).reshape(2, 3).all(dim=())` is the elements' truth, uint8 for uint8).
#[test]
fn repeated_or_empty_dim_lists() -> Result<()> {
    let e = Tensor::zeros([1, 3, 1], DType::F32)?.squeeze_dims(vec![0, -3]).unwrap_err().to_string();
    assert!(e.contains("dim 0 appears multiple times in the list of dims"), "{e}");
    assert_eq!(Tensor::zeros([1, 3, 1], DType::F32)?.squeeze_dims(vec![0, 2])?.dims(), [3]);
    let e = Tensor::zeros([1], DType::F32)?.unflatten(0, Vec::<isize>::new()).unwrap_err().to_string();
    assert!(e.contains("unflatten: sizes must be non-empty"), "{e}");
    let x = Tensor::arange(6, DType::F32)?.reshape([2, 3])?;
    let all = x.all_dim(Vec::<isize>::new(), false)?;
    assert_eq!((all.dtype(), all.dims().to_vec()), (DType::Bool, vec![2, 3]));
    assert_eq!(all.to_f64_vec()?, [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    let any = x.to_dtype(DType::U8)?.any_dim(Vec::<isize>::new(), true)?;
    assert_eq!((any.dtype(), any.dims().to_vec()), (DType::U8, vec![2, 3]));
    Ok(())
}

/// torch's index_add sums reduced-precision values in f32 only for a first or last dim with alpha
/// 1: float16 `zeros(3, 5).index_add(0, zeros(5), rows 2048, 1, 1, 1, 1)` is 2052, with `alpha=3`
/// 6160 (rounded at each addition), and along the middle dim of `[2, 3, 4]` 2048.
#[test]
fn half_index_add_rounds_once_only_where_torch_does() -> Result<()> {
    let mut rows = vec![1.0f64; 25];
    rows[..5].fill(2048.0);
    let src = Tensor::from_vec(rows, [5, 5])?.to_dtype(DType::F16)?;
    let idx = Tensor::zeros([5], DType::I64)?;
    let x = Tensor::zeros([3, 5], DType::F16)?;
    assert_eq!(x.index_add(0, &idx, &src, 1)?.to_f64_vec()?[0], 2052.0);
    assert_eq!(x.index_add(0, &idx, &src, 3)?.to_f64_vec()?[0], 6160.0);
    let mut mid = vec![1.0f64; 40];
    for n in 0..2 {
        mid[n * 20..n * 20 + 4].fill(2048.0);
    }
    let src = Tensor::from_vec(mid, [2, 5, 4])?.to_dtype(DType::F16)?;
    let out = Tensor::zeros([2, 3, 4], DType::F16)?.index_add(1, &idx, &src, 1)?;
    assert_eq!(out.to_f64_vec()?[0], 2048.0);
    Ok(())
}

/// `linear` with a vector weight and a bias works on a vector input (torch: `linear(ones(3),
/// ones(3), tensor(1.))` is 4); `f16.masked_fill(m, tensor(1e6))` overflows as the number does;
/// dropout at p = 1 keeps a bool tensor bool.
#[test]
fn vector_linear_tensor_fill_values_and_bool_dropout() -> Result<()> {
    let v = Tensor::ones([3], DType::F32)?;
    let y = v.linear(&v, Some(&Tensor::scalar_tensor(1.0, DType::F32)?))?;
    assert_eq!((y.dims().to_vec(), y.to_f64_vec()?), (vec![], vec![4.0]));
    let h = Tensor::ones([2], DType::F16)?;
    let m = Tensor::from_vec(vec![true, false], [2])?;
    let e = h.masked_fill(&m, Tensor::scalar_tensor(1e6, DType::F32)?).unwrap_err().to_string();
    assert!(e.contains("c10::Half without overflow"), "{e}");
    let d = m.dropout(1.0, true)?;
    assert_eq!((d.dtype(), d.to_f64_vec()?), (DType::Bool, vec![0.0, 0.0]));
    Ok(())
}

/// float16/bfloat16 `linspace` bit for bit as torch 2.15 (`torch.linspace(lo, hi, n, dtype=...)`
/// viewed as int16): the ends rounded to the dtype, the step and each value in float32 from its
/// nearer end (float16 a product and a sum, bfloat16 one fused multiply-add), rounded once.
#[test]
fn half_linspace_is_torchs_bit_for_bit() -> Result<()> {
    #[rustfmt::skip]
    let cases: &[(DType, f64, f64, usize, &[u16])] = &[
        (DType::F16, -3.7, 11.3, 7, &[50022, 48333, 15667, 17305, 17996, 18534, 18854]),
        (DType::F16, 0.1, 0.7, 33, &[11878, 12185, 12390, 12544, 12698, 12851, 13005, 13159, 13312, 13389, 13466, 13543, 13619, 13696, 13773, 13850, 13927, 14004, 14080, 14157, 14234, 14311, 14362, 14400, 14439, 14477, 14516, 14554, 14592, 14631, 14669, 14708, 14746]),
        (DType::F16, -49.5, 12.25, 65, &[53808, 53777, 53746, 53715, 53684, 53654, 53623, 53592, 53561, 53530, 53499, 53468, 53438, 53407, 53376, 53345, 53314, 53283, 53252, 53195, 53133, 53071, 53010, 52948, 52886, 52824, 52762, 52701, 52639, 52577, 52516, 52454, 52392, 52330, 52268, 52190, 52066, 51942, 51819, 51696, 51572, 51448, 51325, 51202, 50956, 50709, 50462, 50215, 49760, 49266, 48392, 46256, 14688, 16012, 16692, 17186, 17544, 17791, 18038, 18285, 18482, 18606, 18729, 18852, 18976]),
        (DType::F16, 1000.0, -3.0, 40, &[25552, 25501, 25449, 25398, 25346, 25295, 25243, 25192, 25141, 25089, 25038, 24986, 24935, 24883, 24832, 24780, 24729, 24678, 24626, 24573, 24471, 24368, 24265, 24162, 24059, 23956, 23853, 23750, 23648, 23537, 23332, 23126, 22920, 22714, 22489, 22078, 21666, 21006, 19886, 49664]),
        (DType::BF16, -3.7, 11.3, 7, &[49261, 49050, 16295, 16499, 16586, 16653, 16693]),
        (DType::BF16, 0.1, 0.7, 33, &[15821, 15859, 15885, 15904, 15923, 15942, 15962, 15981, 16000, 16010, 16019, 16029, 16038, 16048, 16057, 16067, 16077, 16086, 16096, 16105, 16115, 16125, 16131, 16136, 16141, 16145, 16150, 16155, 16160, 16165, 16169, 16174, 16179]),
        (DType::BF16, -49.5, 12.25, 65, &[49734, 49730, 49726, 49722, 49719, 49715, 49711, 49707, 49703, 49699, 49695, 49692, 49688, 49684, 49680, 49676, 49672, 49668, 49665, 49657, 49650, 49642, 49634, 49626, 49619, 49611, 49603, 49596, 49588, 49580, 49572, 49565, 49557, 49549, 49542, 49532, 49516, 49501, 49485, 49470, 49454, 49439, 49424, 49408, 49378, 49347, 49316, 49285, 49228, 49166, 49057, 48790, 16172, 16338, 16422, 16484, 16529, 16560, 16591, 16622, 16646, 16662, 16677, 16693, 16708]),
        (DType::BF16, 1000.0, -3.0, 40, &[17530, 17524, 17517, 17511, 17504, 17498, 17491, 17485, 17479, 17472, 17466, 17459, 17453, 17446, 17440, 17434, 17427, 17421, 17414, 17408, 17395, 17382, 17369, 17356, 17343, 17331, 17318, 17305, 17292, 17278, 17252, 17227, 17201, 17175, 17147, 17096, 17044, 16962, 16822, 49216]),
    ];
    for &(dtype, lo, hi, n, want) in cases {
        let t = Tensor::linspace(lo, hi, n, dtype)?;
        let got: Vec<u16> = match dtype {
            DType::F16 => t.to_vec::<half::f16>()?.iter().map(|v| v.to_bits()).collect(),
            _ => t.to_vec::<half::bf16>()?.iter().map(|v| v.to_bits()).collect(),
        };
        assert_eq!(got, want, "linspace({lo}, {hi}, {n}) in {dtype:?}");
    }
    Ok(())
}
