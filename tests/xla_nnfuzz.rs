//! The randomized nn.functional sweep of the nn tests (`nn/tests/nn/functional_fuzz.rs`: convolutions,
//! pooling, interpolate, pad, norms, attention, embeddings, losses, with input and weight
//! gradients) replayed on `xla:0` against the same torch values, in strict eager mode and in
//! fused mode. Ops without a StableHLO lowering run through the host fallback and must match all
//! the same. Runs against the PJRT CPU plugin named by `OXTORCH_PJRT_PLUGIN` (`scripts/test.sh`
//! sets it); the cpu replay of the included file runs here too.

#[path = "../nn/tests/nn/functional_fuzz.rs"]
mod functional_fuzz;
#[path = "../nn/tests/nn/golden_case.rs"]
#[allow(dead_code)]
mod golden_case;

use oxtorch::xla::{with_mode, Mode};
use oxtorch::Device;

#[test]
fn nn_functional_random_cases_match_torch_on_xla() {
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        eprintln!("SKIPPED: OXTORCH_PJRT_PLUGIN is unset (scripts/test.sh sets it)");
        return;
    }
    let mut report = Vec::new();
    for mode in [Mode::Eager, Mode::Fused] {
        let lines = with_mode(mode, || functional_fuzz::replay(Device::Xla(0)));
        report.extend(lines.into_iter().map(|l| format!("({mode:?}) {l}")));
    }
    let m = oxtorch::xla::metrics();
    eprintln!("xla nnfuzz: {} executes, host fallbacks {:?}", m.executes, m.host_fallbacks);
    assert!(report.is_empty(), "{} mismatches on xla:\n{}", report.len(), report.join("\n"));
}
