//! `hf-import`: inspect, convert and run Hugging Face checkpoints without Python.

mod cli;

use clap::Parser;

/// Large blocks (tensors) on 64-byte boundaries: some CPU kernels then read operands in place.
#[global_allocator]
static ALLOCATOR: oxtorch_tensor::AlignedAllocator = oxtorch_tensor::AlignedAllocator;

fn main() {
    // Before clap or any model code starts a thread: large per-step blocks then stay faulted in.
    oxtorch_tensor::tune_process_allocator();
    report_out_of_memory_as_an_error();
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// A tensor larger than the machine's memory (a 300 000-token prompt's attention mask) is the CPU
/// backend's out-of-memory panic: reported as one error line and exit status 1, as any other bad
/// input. Every other panic keeps Rust's report.
fn report_out_of_memory_as_an_error() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        match msg {
            Some(m) if m.starts_with("DefaultCPUAllocator: not enough memory") => {
                eprintln!("error: {m}");
                std::process::exit(1);
            }
            _ => default(info),
        }
    }));
}
