//! The quickstart: build tensors, do math, print results the way torch prints them.
//!
//! Run with `cargo run --release --example quickstart`.

use oxtorch as torch;
use torch::{tensor, Tensor};

fn main() -> torch::Result<()> {
    torch::manual_seed(42);

    // Creation: literals, ranges, random.
    let a = tensor!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let b = torch::arange(6, ())?.reshape([3, 2])?;
    let noise = torch::randn([2, 3], ())?;
    println!("a =\n{a}\nb =\n{b}\nnoise =\n{noise}");

    // Type promotion as in torch: int64 @ float needs an explicit cast; scalars keep the tensor's dtype.
    let c = a.matmul(&b.to(torch::float32)?)?;
    println!("a @ b = {c}");
    let h = a.to(torch::float16)?.add(1.0)?;
    println!("f16 + 1.0 stays {}: {h}", h.dtype());
    println!("int64 * 2.5 becomes {}", (&b * 2.5).dtype());

    // Broadcasting, reductions, comparisons.
    let centered = a.sub(&a.mean(0, true)?)?;
    println!("centered = {centered}");
    let (vals, idx) = noise.max_dim(1, false)?;
    println!("row max = {vals}, at {idx}");
    println!("positive = {}", noise.gt(0.0)?);

    // Views share storage: a write through the transpose shows in the original.
    let t = a.t()?;
    t.select(1, 0)?.mul_(10.0)?;
    println!("after scaling row 0 through a view: {a} (version {})", a.version());

    // A larger product runs on the gemm kernels with all cores.
    let x = torch::rand([512, 512], ())?;
    let y = x.matmul(&x)?;
    println!("sum of a 512x512 product: {:.3}", y.sum_all()?.item::<f64>()?);

    // Devices: the string parses; only cpu executes until the XLA backend lands.
    match Tensor::ones([2], ())?.to("tpu") {
        Ok(_) => println!("moved to tpu"),
        Err(e) => println!("to(\"tpu\"): {e}"),
    }
    Ok(())
}
