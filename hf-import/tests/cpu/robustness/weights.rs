//! The weights sweep: safetensors files corrupted byte by byte, sharded indexes and shards,
//! a corrupt `pytorch_model.bin`.

use super::*;

/// The corruptions of a sharded checkpoint's index and shards.
fn sharded_cases(sc: &Scratch) -> Vec<Case> {
    let index = "model.safetensors.index.json";
    let json = original_json(sc, index);
    let map = json["weight_map"].as_object().expect("a weight_map");
    let (tensor, shard) =
        map.iter().next().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).expect("a tensor");
    let bytes = sc.original(index);
    let shard_bytes = sc.original(&shard);
    let set = |path: &[&str], v: Value| {
        let path: JsonPath = path.iter().map(|k| Seg::Key(k.to_string())).collect();
        json_bytes(&with_value(&json, &path, v))
    };
    let mut ghost = json.clone();
    ghost["weight_map"]["model.ghost.weight"] = json!(shard.clone());
    let mut broken_shard = shard_bytes.clone();
    broken_shard[..8].copy_from_slice(&(shard_bytes.len() as u64).to_le_bytes());
    vec![
        Case::of(format!("shard {shard} missing"), vec![Edit::Remove(shard.clone())], &[shard.as_str()]),
        Case::write(format!("shard {shard} empty"), &shard, Vec::new(), &[shard.as_str()]),
        Case::write(
            format!("shard {shard} with a header past its end"),
            &shard,
            broken_shard,
            &[shard.as_str()],
        ),
        Case::write(format!("shard {shard} truncated"), &shard, half(&shard_bytes), &[shard.as_str()]),
        Case::write("index not JSON", index, b"{\"weight_map\": ".to_vec(), &[index]),
        Case::write("index truncated", index, half(&bytes), &[index]),
        Case::write("index a list", index, b"[]".to_vec(), &[index]),
        Case::write("index without weight_map", index, b"{}".to_vec(), &[index]),
        Case::write("weight_map a string", index, set(&["weight_map"], json!("x")), &[index]),
        Case::write("weight_map empty", index, set(&["weight_map"], json!({})), &[]),
        Case::write(
            "a shard name that is a number",
            index,
            set(&["weight_map", tensor.as_str()], json!(5)),
            &[index],
        ),
        Case::write(
            "a shard name escaping",
            index,
            set(&["weight_map", tensor.as_str()], json!("../x.safetensors")),
            &[index],
        ),
        Case::write(
            "a shard name absolute",
            index,
            set(&["weight_map", tensor.as_str()], json!("/etc/hostname")),
            &[index],
        ),
        Case::write("a shard name empty", index, set(&["weight_map", tensor.as_str()], json!("")), &[]),
        Case::write(
            "a shard that is the index",
            index,
            set(&["weight_map", tensor.as_str()], json!(index)),
            &[index],
        ),
        Case::of(
            "a shard that is a folder",
            vec![
                Edit::MakeDir("sub".into()),
                Edit::Write(index.into(), set(&["weight_map", tensor.as_str()], json!("sub"))),
            ],
            &["sub"],
        ),
        Case::write(
            "a shard that does not exist",
            index,
            set(&["weight_map", tensor.as_str()], json!("nope.safetensors")),
            &[],
        ),
        Case::write("a tensor listed but absent", index, json_bytes(&ghost), &["model.ghost.weight"]),
    ]
}

/// The corruptions of a `pytorch_model.bin`.
fn pytorch_cases(bytes: &[u8]) -> Vec<Case> {
    let f = "pytorch_model.bin";
    let empty_zip = [b"PK\x05\x06".as_slice(), &[0u8; 18]].concat();
    let safetensors = st_bytes(
        &[StEntry { name: "w".into(), dtype: "F32".into(), shape: vec![1], data: vec![0; 4] }],
        None,
    );
    vec![
        Case::write("pytorch_model.bin truncated", f, half(bytes), &[]),
        Case::write("pytorch_model.bin empty", f, Vec::new(), &[]),
        Case::write("pytorch_model.bin garbage", f, vec![0xA5; 1024], &[]),
        Case::write("pytorch_model.bin an empty zip", f, empty_zip, &[]),
        Case::write("pytorch_model.bin a safetensors file", f, safetensors, &[]),
        Case::of("pytorch_model.bin removed", vec![Edit::Remove(f.into())], &["no weights"]),
    ]
}

#[test]
fn corrupt_weight_files_never_panic() {
    let root = ScratchRoot::new("weights");
    let mut rng = Rng(SEED ^ 1);
    let mut s = Sweep::default();
    for name in ["llama_tied", "gemma3", "gemma3_mm", "bert", "phi3_longrope"] {
        let mut sc = Scratch::fixture(&root, name);
        baseline(&mut s, name, &sc.dir);
        let cases = safetensors_cases("model.safetensors", &sc.original("model.safetensors"), &mut rng);
        sweep_cases(&mut s, &mut rng, &mut sc, name, cases);
    }
    let mut sc = Scratch::fixture(&root, "qwen2");
    baseline(&mut s, "qwen2", &sc.dir);
    let cases = sharded_cases(&sc);
    sweep_cases(&mut s, &mut rng, &mut sc, "qwen2", cases);
    let mut sc = Scratch::fixture(&root, "llama");
    baseline(&mut s, "llama", &sc.dir);
    let cases = pytorch_cases(&sc.original("pytorch_model.bin"));
    sweep_cases(&mut s, &mut rng, &mut sc, "llama", cases);
    s.finish("robustness weights sweep", 900);
}
