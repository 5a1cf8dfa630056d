//! The compile path: persistent cache hits across "processes", corrupt entries, HLO dumps.

mod common;

use std::path::PathBuf;

use oxtorch_backend_tpu::compiler::{compile_with, CompileSource, DiskCache, Fingerprint};
use oxtorch_backend_tpu::pjrt::CompileOptions;

const ADD: &str =
    "module @m {\n  func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>) {\n    \
                   %0 = \"stablehlo.add\"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n    \
                   \"func.return\"(%0) : (tensor<3xf32>) -> ()\n  }\n}\n";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxtorch-compile-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

type NoLog = fn() -> String;

fn run_add(
    client: &oxtorch_backend_tpu::pjrt::Client,
    exe: &oxtorch_backend_tpu::pjrt::Executable,
) -> Vec<f32> {
    let a = common::f32_buffer(client, &[1.0, 2.0, 3.0], &[3]);
    let b = common::f32_buffer(client, &[10.0, 20.0, 30.0], &[3]);
    common::f32_values(&exe.execute(&[&a, &b]).unwrap()[0])
}

#[test]
fn a_second_compile_loads_from_disk_and_runs_the_same() {
    let Some(client) = common::client() else { return };
    let dir = scratch("hit");
    let opts = CompileOptions::default();
    let cache = DiskCache::new(&dir);
    let (first, source) = compile_with::<NoLog>(&client, ADD, &opts, Some(&cache), None, None).unwrap();
    assert!(matches!(source, CompileSource::Compiled(_)), "{source:?}");
    // A fresh cache object over the same directory stands for a second process.
    let again = DiskCache::new(&dir);
    let (second, source) = compile_with::<NoLog>(&client, ADD, &opts, Some(&again), None, None).unwrap();
    assert!(matches!(source, CompileSource::DiskCache(_)), "{source:?}");
    assert_eq!(run_add(&client, &first), [11.0, 22.0, 33.0]);
    assert_eq!(run_add(&client, &second), [11.0, 22.0, 33.0]);
    // Another program is a miss, not the cached one.
    let sub = ADD.replace("stablehlo.add", "stablehlo.subtract");
    let (third, source) = compile_with::<NoLog>(&client, &sub, &opts, Some(&again), None, None).unwrap();
    assert!(matches!(source, CompileSource::Compiled(_)));
    assert_eq!(run_add(&client, &third), [-9.0, -18.0, -27.0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_or_foreign_entries_are_misses() {
    let Some(client) = common::client() else { return };
    let dir = scratch("corrupt");
    let opts = CompileOptions::default();
    let cache = DiskCache::new(&dir);
    compile_with::<NoLog>(&client, ADD, &opts, Some(&cache), None, None).unwrap();
    let entry = dir.join(format!("{}.xlaexe", Fingerprint::of(&client, ADD, &opts).hex()));
    let bytes = std::fs::read(&entry).unwrap();
    for damaged in [bytes[..bytes.len() / 2].to_vec(), b"garbage".to_vec(), {
        let mut b = bytes.clone();
        let last = b.len() - 1;
        b[last] ^= 0xff;
        b
    }] {
        std::fs::write(&entry, &damaged).unwrap();
        let (exe, source) = compile_with::<NoLog>(&client, ADD, &opts, Some(&cache), None, None).unwrap();
        // A flipped byte inside the plugin's bytes may still deserialize; either way it must run right.
        if damaged.len() != bytes.len() {
            assert!(matches!(source, CompileSource::Compiled(_)), "{source:?}");
        }
        assert_eq!(run_add(&client, &exe), [11.0, 22.0, 33.0]);
    }
    // The miss rewrote a good entry.
    let (_, source) = compile_with::<NoLog>(&client, ADD, &opts, Some(&cache), None, None).unwrap();
    assert!(matches!(source, CompileSource::DiskCache(_)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn programs_are_dumped_and_an_unwritable_cache_is_harmless() {
    let Some(client) = common::client() else { return };
    let dump = scratch("dump");
    let opts = CompileOptions::default();
    // A cache "directory" that is a file cannot be written: compiling still works.
    let blocker = scratch("blocker");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let cache = DiskCache::new(&blocker);
    let (exe, _) = compile_with::<NoLog>(&client, ADD, &opts, Some(&cache), Some(&dump), None).unwrap();
    assert_eq!(run_add(&client, &exe), [11.0, 22.0, 33.0]);
    let name = format!("{}.mlir", Fingerprint::of(&client, ADD, &opts).hex());
    assert_eq!(std::fs::read_to_string(dump.join(name)).unwrap(), ADD);
    let _ = std::fs::remove_dir_all(&dump);
    let _ = std::fs::remove_file(&blocker);
}

#[test]
fn logging_calls_the_reason() {
    let Some(client) = common::client() else { return };
    let mut asked = false;
    compile_with(
        &client,
        ADD,
        &CompileOptions::default(),
        None,
        None,
        Some(("add", || {
            asked = true;
            "first compile".to_string()
        })),
    )
    .unwrap();
    assert!(asked);
}
