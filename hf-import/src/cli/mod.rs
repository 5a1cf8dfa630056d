//! The command line: one subcommand per file.

/// `print!` that ends the process quietly when stdout is a closed pipe (`hf-import inspect M |
/// head`), as command-line tools do, instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!($($arg)*))
    };
}

/// [`out!`] with a newline (`println!`).
macro_rules! outln {
    () => {
        $crate::cli::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod convert;
mod embed;
mod forward;
mod generate;
mod inspect;
mod rerank;
mod transcribe_ctc;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use oxtorch_hf_import::{parse_dtype, Error, Result};
use oxtorch_tensor::{DType, Device};

/// Hugging Face models (config.json + safetensors or pytorch_model.bin) inspected, converted and run
/// with oxtorch. MODEL is a local folder or an `org/name` id already in the local Hugging Face cache.
#[derive(Debug, Parser)]
#[command(name = "hf-import", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Architecture, parameter count, dtypes and a table of tensors.
    Inspect {
        /// model folder or cached hub id
        model: String,
    },
    /// Writes the weights as one model.safetensors (shards merged, .bin converted) plus the
    /// config and tokenizer files.
    Convert {
        /// model folder or cached hub id
        model: String,
        /// output folder
        #[arg(long)]
        out: PathBuf,
        /// cast floating-point weights to f32, bf16 or f16
        #[arg(long)]
        dtype: Option<String>,
    },
    /// Runs the architecture in config.json on named inputs and writes its outputs (float32) under
    /// transformers' field names.
    Forward {
        /// model folder or cached hub id
        model: String,
        /// safetensors file of integer inputs (input_ids, attention_mask, token_type_ids, position_ids)
        #[arg(long)]
        inputs: PathBuf,
        /// safetensors file to write
        #[arg(long)]
        output: PathBuf,
        /// also write hidden_states.0, hidden_states.1, ...
        #[arg(long)]
        hidden_states: bool,
        /// cpu, tpu[:N] or xla[:N]
        #[arg(long, default_value = "cpu")]
        device: String,
        /// compute dtype (f32, bf16, f16); default: the checkpoint's
        #[arg(long)]
        dtype: Option<String>,
    },
    /// Generates text (--prompt) or token ids (--inputs/--output) with a causal LM.
    Generate(Box<generate::GenerateArgs>),
    /// Sentence embeddings (`embeddings`, [n, dim]) of a sentence-transformers model.
    Embed {
        /// model folder or cached hub id
        model: String,
        /// sentences to embed
        sentences: Vec<String>,
        /// safetensors file to write (default: JSON on stdout)
        #[arg(long)]
        output: Option<PathBuf>,
        /// a prompt named in config_sentence_transformers.json (default: its default_prompt_name)
        #[arg(long, conflicts_with = "prompt")]
        prompt_name: Option<String>,
        /// text put before every sentence (instead of the default prompt)
        #[arg(long)]
        prompt: Option<String>,
        /// cpu, tpu[:N] or xla[:N]
        #[arg(long, default_value = "cpu")]
        device: String,
        /// compute dtype (f32, bf16, f16); default: the checkpoint's
        #[arg(long)]
        dtype: Option<String>,
    },
    /// Score passages against a query with a cross-encoder (JSON on stdout)
    Rerank {
        /// cross-encoder folder or cached hub id
        model: String,
        /// the query every passage is scored against
        #[arg(long)]
        query: String,
        /// passages to score
        passages: Vec<String>,
        /// compute dtype (f32, bf16, f16); default: the checkpoint's
        #[arg(long)]
        dtype: Option<String>,
    },
}

/// Writes `args` to stdout and flushes (tokens stream as they come). A closed pipe ends the
/// process with status 0; another write error with status 1 and one line on stderr.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// Runs one command.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Inspect { model } => inspect::run(&model),
        Command::Convert { model, out, dtype } => convert::run(&model, &out, dtype_arg(dtype.as_deref())?),
        Command::Forward { model, inputs, output, hidden_states, device, dtype } => forward::run(
            &model,
            &inputs,
            &output,
            hidden_states,
            device_arg(&device)?,
            dtype_arg(dtype.as_deref())?,
        ),
        Command::Generate(args) => generate::run(*args),
        Command::Embed { model, sentences, output, prompt_name, prompt, device, dtype } => embed::run(
            &model,
            &sentences,
            output.as_deref(),
            embed::PromptArgs { prompt: prompt.as_deref(), prompt_name: prompt_name.as_deref() },
            device_arg(&device)?,
            dtype_arg(dtype.as_deref())?,
        ),
        Command::Rerank { model, query, passages, dtype } => {
            rerank::run(&model, &query, &passages, dtype_arg(dtype.as_deref())?)
        }
    }
}

/// Loads the weights of `dir`, with a progress line on stderr when it is a terminal.
pub(crate) fn load_weights(
    dir: &std::path::Path,
    dtype: Option<DType>,
) -> Result<oxtorch_hf_import::Weights> {
    use std::io::{IsTerminal, Write};
    let tty = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    oxtorch_hf_import::Weights::load_with_progress(dir, dtype, |done, total, file| {
        if !tty {
            return;
        }
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let width = 30;
        let filled = width * done / total.max(1);
        let bar = format!("{}{}", "#".repeat(filled), "-".repeat(width - filled));
        let mut err = std::io::stderr();
        if done < total {
            let _ = write!(err, "\rloading [{bar}] {done}/{total} {name}\x1b[K");
        } else {
            let _ = writeln!(
                err,
                "\rloaded  [{bar}] {total}/{total} in {:.1}s\x1b[K",
                started.elapsed().as_secs_f64()
            );
        }
        let _ = err.flush();
    })
}

/// `--dtype` parsed.
fn dtype_arg(name: Option<&str>) -> Result<Option<DType>> {
    name.map(|n| {
        parse_dtype(n).ok_or_else(|| {
            Error::Input(format!("--dtype: unknown dtype '{n}' (expected f32, bf16, f16 or f64)"))
        })
    })
    .transpose()
}

/// `--device` parsed.
fn device_arg(name: &str) -> Result<Device> {
    name.parse::<Device>().map_err(|e| Error::Input(format!("--device: {e}")))
}
