//! `hf-import`: inspect, convert and run Hugging Face checkpoints without Python.

mod cli;

use clap::Parser;

fn main() {
    // Before clap or any model code starts a thread: large per-step blocks then stay faulted in.
    oxtorch_tensor::tune_process_allocator();
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
