//! Latency of the PJRT layer on the plugin named by `OXTORCH_PJRT_PLUGIN`: load, client, compile,
//! host→device, a cached execute with inputs on device, device→host.
//!
//! `cargo run --release -p oxtorch-backend-tpu --example pjrt_latency`

use std::time::{Duration, Instant};

use oxtorch_backend_tpu::pjrt::{
    Buffer, Client, ClientOptions, CompileOptions, ElementType, Executable, Plugin,
};
use oxtorch_backend_tpu::stablehlo::binary_program;
use oxtorch_core::ops::BinaryOp;
use oxtorch_core::DType;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed()
            })
            .collect(),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::var("OXTORCH_PJRT_PLUGIN").map_err(|_| "set OXTORCH_PJRT_PLUGIN")?;
    let start = Instant::now();
    let plugin = Plugin::load(&path)?;
    println!("load + initialize: {:?}", start.elapsed());
    let start = Instant::now();
    let client = Client::new(plugin, &ClientOptions::new().cpu_device_count(1))?;
    println!("client create: {:?}", start.elapsed());
    let ty = oxtorch_backend_tpu::pjrt::TensorType::new(DType::F32.into(), &[2, 3]);
    let program = binary_program(BinaryOp::Add, &ty)?;
    let start = Instant::now();
    let exe = Executable::compile(&client, &program, &CompileOptions::default())?;
    println!("compile add 2x3: {:?}", start.elapsed());
    let device = client.device(0)?;
    let bytes = [0u8; 24];
    let h2d = time(2000, || Buffer::from_host(&client, device, &bytes, ElementType::F32, &[2, 3]).unwrap());
    let a = Buffer::from_host(&client, device, &bytes, ElementType::F32, &[2, 3])?;
    let exec = time(2000, || exe.execute(&[&a, &a]).unwrap());
    let out = exe.execute(&[&a, &a])?.remove(0);
    let d2h = time(2000, || out.to_host().unwrap());
    println!("median of 2000: host->device 2x3 f32 {h2d:?}, execute (checked, awaited) {exec:?}, device->host {d2h:?}");
    Ok(())
}
