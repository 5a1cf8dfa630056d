//! Safetensors checkpoints load zero-copy: tensors view the file's memory map, reads see the file's
//! values, the first write copies (the file never changes), and misaligned or invalid bytes fall back
//! to a copy with the same values.

use crate::common;

use std::path::PathBuf;

use common::fixture;
use oxtorch_hf_import::weights::read_safetensors;
use oxtorch_hf_import::Weights;
use oxtorch_tensor::{bf16, DType, Tensor};

/// Every tensor of `path`, in file order.
fn read(path: &std::path::Path) -> Vec<(String, Tensor)> {
    let mut all = Vec::new();
    read_safetensors(path, |n, t| {
        all.push((n, t));
        Ok(())
    })
    .unwrap();
    all
}

/// A scratch file path unique to this test process and `name`.
fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("oxtorch-zero-copy-{}-{name}.safetensors", std::process::id()))
}

/// Writes a safetensors file by hand: `header` JSON (padded to 8 bytes) then `data`, so that tests
/// can place tensors at offsets the `safetensors` crate's writer never uses.
fn write_raw(path: &std::path::Path, header: &str, data: &[u8]) {
    let mut h = header.as_bytes().to_vec();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&h);
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn checkpoint_tensors_view_the_file_and_equal_its_values() {
    let path = fixture("bert").join("model.safetensors");
    let file = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&file).unwrap();
    let loaded = read(&path);
    assert!(!loaded.is_empty());
    for (name, t) in &loaded {
        assert!(t.borrows_memory(), "{name} was copied, not mapped");
        let view = st.tensor(name).unwrap();
        assert_eq!(t.dims(), view.shape(), "{name}");
        let bytes: Vec<u8> = match t.dtype() {
            DType::F32 => t.to_vec::<f32>().unwrap().iter().flat_map(|x| x.to_le_bytes()).collect(),
            DType::I64 => t.to_vec::<i64>().unwrap().iter().flat_map(|x| x.to_le_bytes()).collect(),
            other => panic!("{name}: unexpected dtype {other} in the bert fixture"),
        };
        assert_eq!(bytes, view.data(), "{name}: values differ from the file's");
    }
}

#[test]
fn the_first_write_copies_and_never_touches_the_file() {
    let src = fixture("bert").join("model.safetensors");
    let path = scratch("write");
    std::fs::copy(&src, &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let loaded = read(&path);
    let (name, t) = loaded.iter().find(|(_, t)| t.dtype() == DType::F32 && t.rank() == 2).unwrap();
    let original = t.to_vec::<f32>().unwrap();
    // A write through a view copies the whole storage once; the base sees it, the file does not.
    let row = t.narrow(0, 0, 1).unwrap();
    row.add_(1.0).unwrap();
    assert!(!t.borrows_memory(), "{name}: still borrowing after a write");
    let after = t.to_vec::<f32>().unwrap();
    let cols = t.dims()[1];
    for (i, (a, o)) in after.iter().zip(&original).enumerate() {
        let want = if i < cols { o + 1.0 } else { *o };
        assert_eq!(*a, want, "{name}[{i}]");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "the checkpoint file changed");
    // Other tensors of the same file still borrow it, and a fresh load sees the original values.
    assert!(loaded.iter().filter(|(n, _)| n != name).all(|(_, t)| t.borrows_memory()));
    let again = read(&path);
    let fresh = &again.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(fresh.to_vec::<f32>().unwrap(), original);
    drop((loaded, again));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn mapped_tensors_outlive_the_loader_and_run_ops() {
    let weights = Weights::load(&fixture("bert"), None).unwrap();
    let (name, w) =
        weights.iter().map(Result::unwrap).find(|(_, t)| t.dtype() == DType::F32 && t.rank() == 2).unwrap();
    assert!(w.borrows_memory(), "{name}");
    let x = Tensor::ones([3, w.dims()[1]], DType::F32).unwrap();
    let y = x.matmul(&w.t().unwrap()).unwrap();
    let sums = w.sum(1, false).unwrap().to_vec::<f32>().unwrap();
    for (r, row) in y.to_vec::<f32>().unwrap().chunks(w.dims()[0]).enumerate() {
        for (a, b) in row.iter().zip(&sums) {
            assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "row {r}: {a} vs {b}");
        }
    }
    // A cast makes new tensors (they own their elements), when read: the checkpoint stays mapped
    // until then, and a matrix can still be read as stored.
    let cast = Weights::load(&fixture("bert"), Some(DType::BF16)).unwrap();
    let read = cast.get(name).unwrap().unwrap();
    assert_eq!(read.dtype(), DType::BF16);
    assert!(!read.borrows_memory());
    let stored = cast.tensor_as_stored(name, w.dims()).unwrap();
    assert_eq!((stored.dtype(), stored.borrows_memory()), (DType::F32, true));
    assert_eq!(stored.to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap());
}

#[test]
fn misaligned_tensors_and_invalid_bools_are_copied_with_the_right_values() {
    let path = scratch("misaligned");
    // bf16 [3] takes 6 bytes, so the f32 tensor after it starts at an offset that is not 4-aligned;
    // the bool tensor holds a 2, which is not a valid Rust bool and must not be viewed as one.
    let header = r#"{"a":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]},"b":{"dtype":"F32","shape":[2],"data_offsets":[6,14]},"c":{"dtype":"BOOL","shape":[3],"data_offsets":[14,17]}}"#;
    let mut data: Vec<u8> =
        [1.0f32, 2.0, -3.0].iter().flat_map(|&x| bf16::from_f32(x).to_le_bytes()).collect();
    data.extend([0.5f32, -1.25].iter().flat_map(|x| x.to_le_bytes()));
    data.extend([0u8, 1, 2]);
    write_raw(&path, header, &data);
    let loaded = read(&path);
    std::fs::remove_file(&path).unwrap();
    let get = |n: &str| loaded.iter().find(|(name, _)| name == n).unwrap().1.clone();
    assert_eq!(get("a").to_vec::<bf16>().unwrap(), [1.0f32, 2.0, -3.0].map(bf16::from_f32));
    assert!(get("a").borrows_memory(), "an aligned tensor should be mapped");
    assert_eq!(get("b").to_vec::<f32>().unwrap(), [0.5, -1.25]);
    assert!(!get("b").borrows_memory(), "a misaligned tensor must be copied");
    assert_eq!(get("c").to_vec::<bool>().unwrap(), [false, true, true]);
    assert!(!get("c").borrows_memory(), "a bool tensor holding 2 must be copied");
}

#[test]
fn released_pages_read_back_the_same_values() {
    let path = scratch("release");
    let n = 3 * 4096 + 5;
    let values: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let header = format!(r#"{{"w":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}}"#, data.len());
    write_raw(&path, &header, &data);
    let all = read(&path);
    let w = &all[0].1;
    assert!(w.borrows_memory());
    assert_eq!(w.to_vec::<f32>().unwrap(), values);
    // The pages leave resident memory and come back from the file on the next read.
    w.release_pages();
    assert!(w.borrows_memory(), "releasing pages must not copy");
    assert_eq!(w.to_vec::<f32>().unwrap(), values);
    let sum = w.to_dtype(DType::F64).unwrap().sum_all().unwrap().item::<f64>().unwrap();
    assert_eq!(sum, values.iter().map(|&v| f64::from(v)).sum::<f64>());
    // An owned tensor: nothing happens.
    let owned = Tensor::from_vec(values.clone(), [n]).unwrap();
    owned.release_pages();
    assert_eq!(owned.to_vec::<f32>().unwrap(), values);
    drop(all);
    std::fs::remove_file(&path).unwrap();
}

/// A cast read of a mapped tensor larger than one copy chunk: exact values, the stored tensor
/// still readable after its pages were released chunk by chunk, and a view releasing only its span.
#[test]
fn a_cast_read_of_a_large_mapped_tensor_is_exact() {
    let dir = scratch("cast-read");
    std::fs::create_dir_all(&dir).unwrap();
    let n = 1_500_007; // 6 MB of f32: two chunks and a tail
    let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 100.0).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let header = format!(r#"{{"w":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}}"#, data.len());
    write_raw(&dir.join("model.safetensors"), &header, &data);
    let weights = Weights::load(&dir, Some(DType::BF16)).unwrap();
    let cast = weights.get("w").unwrap().unwrap();
    let want: Vec<bf16> = values.iter().map(|&v| bf16::from_f32(v)).collect();
    let got = cast.to_vec::<bf16>().unwrap();
    let bad = got.iter().zip(&want).position(|(a, b)| a != b);
    assert!(
        bad.is_none(),
        "first difference at {bad:?}: {:?} vs {:?}",
        bad.map(|i| got[i]),
        bad.map(|i| want[i])
    );
    let stored = weights.tensor_as_stored("w", &[n]).unwrap();
    assert!(stored.borrows_memory());
    assert!(stored.to_vec::<f32>().unwrap() == values, "the stored values changed");
    stored.narrow(0, 10_000, 500_000).unwrap().release_pages();
    assert!(stored.to_vec::<f32>().unwrap() == values, "a released view changed the values");
    drop((weights, stored));
    std::fs::remove_dir_all(&dir).unwrap();
}
