//! The state dicts sweep: malformed safetensors bytes, module state dicts with wrong shapes, dtypes
//! and keys, and submodule and parameter paths.

use oxtorch_nn::{Forward, ModuleExt, StateDict};

use super::*;

/// Safetensors bytes: truncated, lying header lengths, overflowing shapes and offsets, bad
/// dtypes. Module state dicts with tensors of the wrong shape or dtype.
pub(super) fn state_dicts(s: &mut Sweep, rng: &mut Rng, m: &mut Modules) {
    let headers = [
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
        r#"{"a":{"dtype":"F32","shape":[18446744073709551615,2],"data_offsets":[0,8]}}"#,
        r#"{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#,
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}"#,
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}}"#,
        r#"{"a":{"dtype":"X99","shape":[2],"data_offsets":[0,8]}}"#,
        r#"{"a":{"dtype":"BOOL","shape":[8],"data_offsets":[0,8]}}"#,
        r#"{"__metadata__":{"format":1},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}"#,
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#,
        r#"{"a":"#,
        r#"[]"#,
        "",
    ];
    let header = rng.pick(&headers);
    let lie = rng.pick(&[None, Some(u64::MAX), Some(1 << 40), Some(0), Some(3)]);
    let data = rng.pick(&[0usize, 4, 8, 12]);
    let mut bytes = lie.unwrap_or(header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(0x3Fu8, data));
    if rng.one_in(6) {
        bytes.truncate(rng.below(bytes.len() + 1));
    }
    s.call(
        "StateDict::from_safetensors_bytes",
        || {
            format!(
                "header length {lie:?}, header {header:?}, {data} data bytes, total {} bytes",
                bytes.len()
            )
        },
        || StateDict::from_safetensors_bytes(&bytes),
    );

    // Module state dicts: wrong shapes, dtypes, extra and missing keys, strict or not.
    let strict = rng.coin();
    let mut sd = StateDict::new();
    let mut desc = Vec::new();
    for key in ["weight", "bias", "running_mean", "running_var", "num_batches_tracked", "extra.key", ""] {
        if rng.coin() {
            let shape = rng.pick(&[vec![2, 3], vec![2], vec![3], vec![], vec![2, 3, 1], vec![0]]);
            let d = rng.pick(&DType::ALL);
            if let Ok(t) = Tensor::ones(shape.clone(), d) {
                sd.insert(key, t);
                desc.push(format!("{key:?}: {d:?}{shape:?}"));
            }
        }
    }
    let args = || format!("{{{}}}, strict {strict}", desc.join(", "));
    s.call("Linear::load_state_dict", args, || m.linear.load_state_dict(&sd, strict));
    s.call("BatchNorm::load_state_dict", args, || m.batch_norm.load_state_dict(&sd, strict));
    s.call("Embedding::load_state_dict", args, || m.embedding.load_state_dict(&sd, strict));
    // Forward after a (possibly partial) load must still answer.
    let x = shaped(rng, &[2, 3]);
    s.call(
        "Linear::forward(after load)",
        || format!("{}, after {}", x.desc, args()),
        || m.linear.forward(&x.t),
    );
    let path = rng.pick(&["", ".", "weight", "0", "a.b..c", "layers.99999999999999999999", "\u{0}"]);
    s.call("get_submodule", || format!("{path:?}"), || m.encoder.get_submodule(path).map(|_| ()));
    s.call("get_parameter", || format!("{path:?}"), || m.encoder.get_parameter(path));
}
