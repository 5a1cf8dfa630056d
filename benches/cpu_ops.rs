//! Criterion benches for the CPU backend's base kernels: matmul and add.
//!
//! `cargo bench --bench cpu_ops`. Side-by-side ratios against PyTorch come from the `oxtorch-bench`
//! runner and `../shared/bench/torch_baseline.py` (see BENCHMARKS.md); these benches track our own
//! kernels between commits.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxtorch::{DType, Tensor};

fn matmul(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul");
    for (n, dtype) in [(256, DType::F32), (1024, DType::F32), (512, DType::F16), (512, DType::BF16)] {
        let a = Tensor::rand([n, n], dtype).unwrap();
        let b = Tensor::rand([n, n], dtype).unwrap();
        g.throughput(Throughput::Elements((2 * n * n * n) as u64));
        g.bench_with_input(BenchmarkId::new(format!("{dtype}"), n), &n, |bench, _| {
            bench.iter(|| a.matmul(&b).unwrap())
        });
    }
    g.finish();
}

fn add(c: &mut Criterion) {
    let mut g = c.benchmark_group("add");
    for n in [6usize, 1 << 16, 1 << 24] {
        let a = Tensor::rand([n], ()).unwrap();
        let b = Tensor::rand([n], ()).unwrap();
        g.throughput(Throughput::Bytes((3 * 4 * n) as u64));
        g.bench_with_input(BenchmarkId::new("f32", n), &n, |bench, _| bench.iter(|| a.add(&b).unwrap()));
    }
    let a = Tensor::rand([1024, 1024], ()).unwrap();
    let row = Tensor::rand([1024], ()).unwrap();
    g.bench_function("f32 broadcast row 1024x1024", |bench| bench.iter(|| a.add(&row).unwrap()));
    let at = a.t().unwrap();
    g.bench_function("f32 transposed 1024x1024", |bench| bench.iter(|| at.add(&a).unwrap()));
    g.finish();
}

criterion_group!(benches, matmul, add);
criterion_main!(benches);
