//! The facade's torch-named wrappers `torch::special`'s Bessel and
//! logsumexp entries and the autocast queries.

use oxtorch as torch;
use torch::{DType, Tensor};

fn values(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

#[test]
fn special_bessel_and_logsumexp_match_torch() {
    let x = Tensor::from_vec(vec![-2.0f64, 0.0, 0.5, 3.0], [4]).unwrap();
    // torch.special.i0 / i0e / i1 / i1e of the same values (float64).
    let cases: [(&str, Vec<f64>, [f64; 4]); 4] = [
        (
            "i0",
            values(&torch::special::i0(&x).unwrap()),
            [2.279585302336067, 1.0, 1.0634833707413236, 4.880792585865024],
        ),
        (
            "i0e",
            values(&torch::special::i0e(&x).unwrap()),
            [0.308508322553671, 1.0, 0.6450352704491501, 0.24300035416182536],
        ),
        (
            "i1",
            values(&torch::special::i1(&x).unwrap()),
            [-1.5906368546373295, 0.0, 0.25789430539089636, 3.9533702174026093],
        ),
        (
            "i1e",
            values(&torch::special::i1e(&x).unwrap()),
            [-0.2152692892489377, 0.0, 0.15642080318487173, 0.19682671329730084],
        ),
    ];
    for (name, got, want) in cases {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12 * (1.0 + w.abs()), "special.{name}: got {got:?}, want {want:?}");
        }
    }
    let m = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], [2, 2]).unwrap();
    let lse = values(&torch::special::logsumexp(&m, 1isize, false).unwrap());
    let want = [2.3132616875182228, 4.313261687518223];
    assert!(lse.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12), "logsumexp: {lse:?}");
}

#[test]
fn autocast_queries_follow_scopes_and_the_switch() {
    assert!(!torch::is_autocast_enabled());
    assert_eq!(torch::get_autocast_dtype(), DType::BF16);
    {
        let _g = torch::AutocastGuard::new(DType::F16, true).unwrap();
        assert!(torch::is_autocast_enabled());
        assert_eq!(torch::get_autocast_dtype(), DType::F16);
        assert_eq!(torch::autocast_dtype(), Some(DType::F16));
    }
    assert!(!torch::is_autocast_enabled());
    torch::set_autocast_enabled(true);
    assert_eq!(torch::autocast_dtype(), Some(DType::BF16));
    torch::set_autocast_enabled(false);
    assert!(!torch::is_autocast_enabled());
}
