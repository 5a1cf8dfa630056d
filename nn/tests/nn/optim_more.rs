//! NAdam, RAdam, Adamax, Adadelta, Rprop and ASGD against PyTorch (`nn/tests/make_optim_golden.py`,
//! which also writes these values to `optim_golden.json`; the nn tests have no JSON reader, so they
//! are embedded below), bit-exact resumption from a state dict, and torch's errors for invalid
//! options.

use oxtorch_nn::optim::{
    Adadelta, AdadeltaOptions, Adamax, AdamaxOptions, AsgdOptions, NAdam, NAdamOptions, Optimizer,
    OptimizerState, RAdam, RAdamOptions, Rprop, RpropOptions, ASGD,
};
use oxtorch_tensor::{Result, Tensor};

/// The gradient of every step, cycled (twice over the 8 recorded steps).
const GRADS: [[f64; 2]; 4] = [[0.5, -1.0], [0.1, 0.3], [-0.2, 0.4], [0.3, -0.1]];
const STEPS: usize = 8;

/// The script's cases (the `*_ax` entries are ASGD's averages, checked separately).
const CASES: [&str; 14] = [
    "nadam_default",
    "nadam_l2",
    "nadam_decoupled",
    "radam_default",
    "radam_l2",
    "radam_decoupled",
    "adamax_default",
    "adamax_options",
    "adadelta_default",
    "adadelta_options",
    "rprop_default",
    "rprop_options",
    "asgd_default",
    "asgd_options",
];

fn asgd_options() -> AsgdOptions {
    AsgdOptions { lr: 0.05, lambd: 0.01, alpha: 0.5, t0: 1.0, weight_decay: 0.1, maximize: true }
}

fn boxed<O: Optimizer + 'static>(r: Result<O>) -> Result<Box<dyn Optimizer>> {
    r.map(|o| Box::new(o) as Box<dyn Optimizer>)
}

/// The optimizer of case `name`, as the script builds it.
fn make(name: &str, params: Vec<Tensor>) -> Result<Box<dyn Optimizer>> {
    match name {
        "nadam_default" => boxed(NAdam::new(params, NAdamOptions::default())),
        "nadam_l2" => boxed(NAdam::new(
            params,
            NAdamOptions { lr: 0.01, weight_decay: 0.1, momentum_decay: 0.01, ..Default::default() },
        )),
        "nadam_decoupled" => boxed(NAdam::new(
            params,
            NAdamOptions {
                lr: 0.01,
                betas: (0.8, 0.99),
                weight_decay: 0.1,
                decoupled_weight_decay: true,
                maximize: true,
                ..Default::default()
            },
        )),
        "radam_default" => boxed(RAdam::new(params, RAdamOptions::default())),
        "radam_l2" => {
            boxed(RAdam::new(params, RAdamOptions { lr: 0.01, weight_decay: 0.1, ..Default::default() }))
        }
        "radam_decoupled" => boxed(RAdam::new(
            params,
            RAdamOptions {
                lr: 0.01,
                betas: (0.8, 0.99),
                weight_decay: 0.1,
                decoupled_weight_decay: true,
                maximize: true,
                ..Default::default()
            },
        )),
        "adamax_default" => boxed(Adamax::new(params, AdamaxOptions::default())),
        "adamax_options" => boxed(Adamax::new(
            params,
            AdamaxOptions { lr: 0.01, betas: (0.8, 0.99), eps: 1e-4, weight_decay: 0.1, maximize: true },
        )),
        "adadelta_default" => boxed(Adadelta::new(params, AdadeltaOptions::default())),
        "adadelta_options" => boxed(Adadelta::new(
            params,
            AdadeltaOptions { lr: 0.5, rho: 0.8, eps: 1e-4, weight_decay: 0.1, maximize: true },
        )),
        "rprop_default" => boxed(Rprop::new(params, RpropOptions::default())),
        "rprop_options" => boxed(Rprop::new(
            params,
            RpropOptions { lr: 0.05, etas: (0.3, 1.5), step_sizes: (0.01, 0.08), maximize: true },
        )),
        "asgd_default" => boxed(ASGD::new(params, AsgdOptions::default())),
        "asgd_options" => boxed(ASGD::new(params, asgd_options())),
        _ => panic!("no case {name}"),
    }
}

/// The state tensors each optimizer must save to resume exactly.
fn state_names(name: &str) -> &'static [&'static str] {
    match name.split('_').next() {
        Some("nadam") => &["step", "mu_product", "exp_avg", "exp_avg_sq"],
        Some("radam") => &["step", "exp_avg", "exp_avg_sq"],
        Some("adamax") => &["step", "exp_avg", "exp_inf"],
        Some("adadelta") => &["step", "square_avg", "acc_delta"],
        Some("rprop") => &["step", "prev", "step_size"],
        Some("asgd") => &["step", "eta", "mu", "ax"],
        _ => panic!("no case {name}"),
    }
}

fn golden(name: &str) -> &'static [[f64; 2]; 8] {
    &GOLDEN.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no golden {name}")).1
}

/// The parameter `[1, -2]` in float64, as the script's.
fn param() -> Result<Tensor> {
    Tensor::from_slice(&[1.0f64, -2.0], [2])?.requires_grad_(true)
}

/// Steps `from..to` of the gradient sequence.
fn steps(opt: &mut dyn Optimizer, p: &Tensor, from: usize, to: usize) -> Result<()> {
    for k in from..to {
        p.set_grad(Some(Tensor::from_slice(&GRADS[k % GRADS.len()], [2])?))?;
        opt.step()?;
    }
    Ok(())
}

fn assert_close(what: &str, got: &[f64], want: &[f64; 2]) {
    assert_eq!(got.len(), 2, "{what}: length");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{what}[{i}]: got {a}, PyTorch {b}");
    }
}

#[test]
fn trajectories_match_pytorch() -> Result<()> {
    for name in CASES {
        let p = param()?;
        let mut opt = make(name, vec![p.clone()])?;
        for (k, want) in golden(name).iter().enumerate() {
            steps(opt.as_mut(), &p, k, k + 1)?;
            assert_close(&format!("{name} step {}", k + 1), &p.to_f64_vec()?, want);
        }
    }
    Ok(())
}

/// ASGD's running average (`ax`, torch's `state["ax"]`), which the parameter never reads.
#[test]
fn asgd_average_matches_pytorch() -> Result<()> {
    for (name, options) in [("asgd_default", AsgdOptions::default()), ("asgd_options", asgd_options())] {
        let p = param()?;
        let mut opt = ASGD::new(vec![p.clone()], options)?;
        assert!(opt.averaged(0).is_none());
        for (k, want) in golden(&format!("{name}_ax")).iter().enumerate() {
            steps(&mut opt, &p, k, k + 1)?;
            let ax = opt.averaged(0).expect("a step was taken");
            assert_close(&format!("{name} ax step {}", k + 1), &ax.to_f64_vec()?, want);
            assert!(ax.equal(opt.state_dict()?.tensor(0, "ax").unwrap())?);
        }
    }
    Ok(())
}

/// 3 steps, state dict (in memory, and through a file), a fresh optimizer on a copy of the
/// parameter, 5 more steps: the same bits as 8 steps straight, parameter and state alike.
#[test]
fn resuming_from_a_state_dict_is_bit_exact() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("oxtorch-optim-more-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in CASES {
        let straight = param()?;
        let mut opt = make(name, vec![straight.clone()])?;
        steps(opt.as_mut(), &straight, 0, STEPS)?;
        let want = opt.state_dict()?;

        let p = param()?;
        let mut first = make(name, vec![p.clone()])?;
        steps(first.as_mut(), &p, 0, 3)?;
        let saved = first.state_dict()?;
        let path = dir.join(format!("{name}.safetensors"));
        saved.save(&path)?;
        for (how, state) in [("in memory", saved), ("from a file", OptimizerState::load(&path)?)] {
            let q = p.detach().copy()?.requires_grad_(true)?;
            let mut resumed = make(name, vec![q.clone()])?;
            resumed.load_state_dict(&state)?;
            steps(resumed.as_mut(), &q, 3, STEPS)?;
            assert!(q.equal(&straight)?, "{name} ({how}): the resumed parameter differs");
            let got = resumed.state_dict()?;
            for key in state_names(name) {
                let (a, b) = (got.tensor(0, key), want.tensor(0, key));
                let (a, b) = (a.unwrap_or_else(|| panic!("{name}: no {key}")), b.unwrap());
                assert_eq!(a.dtype(), b.dtype(), "{name} ({how}): {key} dtype");
                assert!(a.equal(b)?, "{name} ({how}): {key} differs");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

/// torch's `ValueError` texts.
#[test]
fn invalid_options_are_torchs_errors() {
    let p = || vec![param().unwrap()];
    let cases = [
        (
            boxed(NAdam::new(p(), NAdamOptions { momentum_decay: -0.1, ..Default::default() })),
            "Invalid momentum_decay value: -0.1",
        ),
        (
            boxed(RAdam::new(p(), RAdamOptions { betas: (0.9, 1.5), ..Default::default() })),
            "Invalid beta parameter at index 1: 1.5",
        ),
        (
            boxed(Adamax::new(p(), AdamaxOptions { lr: -0.5, ..Default::default() })),
            "Invalid learning rate: -0.5",
        ),
        (
            boxed(Adamax::new(p(), AdamaxOptions { eps: f64::NAN, ..Default::default() })),
            "Invalid epsilon value: NaN",
        ),
        (
            boxed(Adadelta::new(p(), AdadeltaOptions { rho: 1.5, ..Default::default() })),
            "Invalid rho value: 1.5",
        ),
        (
            boxed(Rprop::new(p(), RpropOptions { etas: (1.5, 1.2), ..Default::default() })),
            "Invalid eta values: 1.5, 1.2",
        ),
        (
            boxed(ASGD::new(p(), AsgdOptions { lambd: -0.5, ..Default::default() })),
            "Invalid lambd value: -0.5",
        ),
    ];
    for (r, want) in cases {
        assert_eq!(r.err().expect("an invalid option was accepted").to_string(), want);
    }
}

/// `nn/tests/make_optim_golden.py`'s output: the parameter (or ASGD's `ax`) after each step.
const GOLDEN: &[(&str, [[f64; 2]; 8])] = &[
    (
        "nadam_default",
        [
            [0.9978870964595885, -1.9978870964384594],
            [0.9973533341574384, -1.9983671007961854],
            [0.99803118114552, -1.9990967376801139],
            [0.9967630891256357, -1.9988553677565521],
            [0.9949417875386318, -1.997026853794322],
            [0.9943279471484933, -1.9974450792330276],
            [0.9948274576617206, -1.9981362409472085],
            [0.9934990310925073, -1.9978798272979372],
        ],
    ),
    (
        "nadam_l2",
        [
            [0.9894351007341572, -1.9894351006461164],
            [0.9855461280860722, -1.9896832888142681],
            [0.9864893276487253, -1.9909549168696241],
            [0.9793275816973773, -1.987560616997401],
            [0.9700624817721359, -1.9777448070296058],
            [0.9656838006443335, -1.9774478713586663],
            [0.9657336433471069, -1.978214886780436],
            [0.958147996842503, -1.9745249836571699],
        ],
    ),
    (
        "nadam_decoupled",
        [
            [1.0099527804863309, -2.008952780595859],
            [1.0121169403214099, -2.004615847285618],
            [1.0075588239452145, -1.9986265195620623],
            [1.0136773012912927, -1.9978759483740487],
            [1.023075188946506, -2.006183299460483],
            [1.025823837869292, -2.0020094232753753],
            [1.022076104592212, -1.9960512023327395],
            [1.0285030641482857, -1.9953326312324768],
        ],
    ),
    (
        "radam_default",
        [
            [0.9995, -1.999],
            [0.9992105263157895, -1.9986842105263158],
            [0.9991016702272286, -1.9986325500097106],
            [0.9989372328907936, -1.9985668332315774],
            [0.998690853071009, -1.9982729698338582],
            [0.9986739725638406, -1.9982660731823183],
            [0.9986598319345463, -1.998262878362411],
            [0.9986394256675114, -1.9982583398733265],
        ],
    ),
    (
        "radam_l2",
        [
            [0.994, -1.988],
            [0.9901084210526315, -1.9828484210526316],
            [0.9880255028160807, -1.9803421301223538],
            [0.985388613289543, -1.9776979935393153],
            [0.9819340394361873, -1.9727746546387508],
            [0.9817319855988565, -1.972641766719859],
            [0.9815265636204917, -1.9725148495163436],
            [0.9812559676024659, -1.972352118792949],
        ],
    ),
    (
        "radam_decoupled",
        [
            [1.004, -2.008],
            [1.0057737777777778, -2.0087697777777778],
            [1.0055876761311475, -2.006761008],
            [1.006140354037672, -2.0050930003795338],
            [1.0077163174437487, -2.006300663209711],
            [1.007243837018877, -2.004494300771661],
            [1.0066017424620692, -2.002512320160605],
            [1.0062094055803208, -2.0005843170162727],
        ],
    ),
    (
        "adamax_default",
        [
            [0.99800000004, -1.99800000002],
            [0.9968409462725484, -1.9973677888677952],
            [0.9964046497703053, -1.9972642608831768],
            [0.9957449232366391, -1.9971324322376423],
            [0.994759403977211, -1.9965447054480812],
            [0.9938979849935758, -1.9962101290826693],
            [0.993354636786975, -1.9960930646372295],
            [0.9926949102533088, -1.995961235991695],
        ],
    ),
    (
        "adamax_options",
        [
            [1.0099975006248438, -2.0099987501562304],
            [1.0144716942248377, -2.010973657227922],
            [1.0139883522500746, -2.008413300199748],
            [1.015398486671473, -2.0062631515609515],
            [1.019337455917707, -2.007770741334946],
            [1.02222446442744, -2.0071657936070704],
            [1.0224446471949125, -2.004769200537325],
            [1.023842506620813, -2.0026188884287226],
        ],
    ),
    (
        "adadelta_default",
        [
            [0.9968377855834876, -1.9968377381511013],
            [0.9959152832279488, -1.998186127695027],
            [0.9976920881138662, -1.9999663602581736],
            [0.9951890643364456, -1.9994768506145062],
            [0.991630514235698, -1.9960493528807832],
            [0.9907505426174026, -1.9973352959550263],
            [0.9924790178097654, -1.9990422299038164],
            [0.989978537683924, -1.998588718390428],
        ],
    ),
    (
        "adadelta_options",
        [
            [1.011162911443719, -2.011175975124542],
            [1.0111137125525407, -2.002110583599969],
            [1.000854785821266, -1.9914377177854325],
            [1.008827287343882, -1.9892459305922594],
            [1.0218663914826813, -2.002297452568128],
            [1.0217726046991904, -1.9927125642400942],
            [1.010663499407785, -1.9814022553996082],
            [1.018858749131766, -1.9792274727492118],
        ],
    ),
    (
        "rprop_default",
        [
            [0.99, -1.99],
            [0.978, -1.99],
            [0.978, -1.9949999999999999],
            [0.972, -1.9949999999999999],
            [0.9648, -1.9925],
            [0.95616, -1.9925],
            [0.95616, -1.99375],
            [0.95184, -1.99375],
        ],
    ),
    (
        "rprop_options",
        [
            [1.05, -2.05],
            [1.125, -2.05],
            [1.125, -2.0349999999999997],
            [1.1475, -2.0349999999999997],
            [1.18125, -2.0449999999999995],
            [1.2318749999999998, -2.0449999999999995],
            [1.2318749999999998, -2.0349999999999997],
            [1.2470624999999997, -2.0349999999999997],
        ],
    ),
    (
        "asgd_default",
        [
            [0.9949990001117811, -1.9899980002235622],
            [0.9939980058809543, -1.9929960079248596],
            [0.995997008859516, -1.9969940088819944],
            [0.9929960196373333, -1.9959920141500196],
            [0.9879950416572151, -1.9859900481898383],
            [0.9869940574135182, -1.9889880509643068],
            [0.9889930614384949, -1.9929860440143914],
            [0.9859920881638881, -1.9919840562765443],
        ],
    ),
    (
        "asgd_default_ax",
        [
            [0.9949990001117811, -1.9899980002235622],
            [0.9939980058809543, -1.9929960079248596],
            [0.995997008859516, -1.9969940088819944],
            [0.9929960196373333, -1.9959920141500196],
            [0.9879950416572151, -1.9859900481898383],
            [0.9869940574135182, -1.9889880509643068],
            [0.9889930614384949, -1.9929860440143914],
            [0.9859920881638881, -1.9919840562765443],
        ],
    ),
    (
        "asgd_options",
        [
            [1.0195000002905727, -2.0390000005811455],
            [1.0188929020271307, -2.012792050993563],
            [1.003296787108105, -1.9817372181166197],
            [1.0127715515233917, -1.9758420830151548],
            [1.0321819071467642, -2.014935876923241],
            [1.031505751323431, -1.9888862712345026],
            [1.0158559272292482, -1.9579937016483522],
            [1.025252290234631, -1.9522348056295804],
        ],
    ),
    (
        "asgd_options_ax",
        [
            [1.0195000002905727, -2.0390000005811455],
            [1.0188929020271307, -2.012792050993563],
            [1.003296787108105, -1.9817372181166197],
            [1.0080341693157484, -1.9787896505658873],
            [1.0160834154993066, -1.9908383930440856],
            [1.0199389994553376, -1.9903503625916898],
            [1.0191223849979512, -1.9838790303065919],
            [1.0201440359011786, -1.9786049927032447],
        ],
    ),
];
