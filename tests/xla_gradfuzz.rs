//! The randomized gradient sweep of the autograd tests (`autograd/tests/grad_fuzz.rs`: ~150
//! differentiable ops, non-contiguous inputs, second order) replayed on `xla:0` against the same
//! torch values, in strict eager mode and in fused mode: the backward formulas run on the device
//! as they do on cpu. Runs against the PJRT CPU plugin named by `OXTORCH_PJRT_PLUGIN`
//! (`scripts/test.sh` sets it); the cpu replay of the included file runs here too.

#[path = "../autograd/tests/grad_fuzz.rs"]
mod grad_fuzz;

use oxtorch::xla::{with_mode, Mode};
use oxtorch::Device;

#[test]
fn random_op_gradients_match_torch_on_xla() {
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        eprintln!("SKIPPED: OXTORCH_PJRT_PLUGIN is unset (scripts/test.sh sets it)");
        return;
    }
    let mut report = Vec::new();
    for mode in [Mode::Eager, Mode::Fused] {
        let lines = with_mode(mode, || grad_fuzz::replay(Device::Xla(0)));
        report.extend(lines.into_iter().map(|l| format!("({mode:?}) {l}")));
    }
    let m = oxtorch::xla::metrics();
    eprintln!("xla gradfuzz: {} executes, host fallbacks {:?}", m.executes, m.host_fallbacks);
    assert!(report.is_empty(), "{} cases differ on xla:\n{}", report.len(), report.join("\n"));
}
