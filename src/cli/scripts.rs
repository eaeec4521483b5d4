//! `replay export` and `replay capture`: thin front ends to `scripts/export_model.py` and
//! `scripts/capture_trace.py`, run with the project's `.venv` Python.

use std::path::PathBuf;

use clap::Args;

use replay::model::input_spec::InputSpec;
use replay::model::python::run_script;
use replay::pipeline::options::{
    DEFAULT_BATCH, DEFAULT_CAPTURE_CANDIDATES, DEFAULT_CAPTURE_WARMUP, DEFAULT_SEQ_LEN,
};
use replay::pipeline::{CaptureOptions, CompileMode};

use super::args::{DeviceArgs, OptionalDeviceArgs, ThreadsArgs};
use super::console::ConsoleObserver;

#[derive(Debug, Args, Clone)]
#[command(mut_arg("device", |a| a
    .value_name("DEVICE")
    .help("With --format pt2: the device to export (and compile) for: cpu (default), cuda or cuda:N; compile a package where it will run")))]
pub struct ExportArgs {
    /// A model of the zoo, random weights: bloom-560m, gpt2-small, bert-base, t5-small,
    /// resnet50, or their small test sizes bloom-tiny, gpt2-tiny, bert-tiny, t5-tiny, resnet-tiny
    #[arg(long, conflicts_with = "config")]
    pub model: Option<String>,

    /// A Hugging Face style BLOOM config.json for other sizes
    #[arg(long, value_name = "JSON")]
    pub config: Option<PathBuf>,

    /// Output file: TorchScript (.pt), or with --format pt2 a PT2 archive (.pt2)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// A local Hugging Face BLOOM checkpoint folder (*.safetensors) instead of random weights
    #[arg(long, value_name = "DIR")]
    pub weights: Option<PathBuf>,

    /// float32, bfloat16 or float16
    #[arg(long, default_value = "float32")]
    pub dtype: String,

    /// torchscript (a traced model) or pt2 (a torch.export ExportedProgram, shapes fixed at
    /// --seq-len and batch 1)
    #[arg(long, default_value = "torchscript", value_parser = ["torchscript", "pt2"])]
    pub format: String,

    /// With --format pt2: compile the program with AOTInductor for --device into a package
    /// that `replay full --model M.pt2` times without Python
    #[arg(long)]
    pub aoti: bool,

    #[command(flatten)]
    pub device: OptionalDeviceArgs,

    /// Tokens in the example input (the traced model generalises to other lengths; a pt2
    /// archive has this length built in)
    #[arg(long, value_name = "N", value_parser = crate::cli::value_parsers::positive::<i64>)]
    pub seq_len: Option<i64>,
}

pub fn export(args: ExportArgs) -> anyhow::Result<()> {
    let mut argv = vec![
        "--out".to_string(),
        args.out.display().to_string(),
        "--dtype".into(),
        args.dtype.clone(),
    ];
    if let Some(model) = &args.model {
        argv.extend(["--model".into(), model.clone()]);
    }
    if let Some(config) = &args.config {
        argv.extend(["--config".into(), config.display().to_string()]);
    }
    if let Some(weights) = &args.weights {
        argv.extend(["--weights".into(), weights.display().to_string()]);
    }
    argv.extend(["--format".into(), args.format.clone()]);
    if args.aoti {
        argv.push("--aoti".into());
    }
    if let Some(device) = args.device.device {
        argv.extend(["--device".into(), device.short_name()]);
    }
    if let Some(seq_len) = args.seq_len {
        argv.extend(["--seq-len".into(), seq_len.to_string()]);
    }
    run_script("export_model.py", &argv)?;
    Ok(())
}

#[derive(Debug, Args, Clone)]
pub struct CaptureArgs {
    /// Model to profile: TorchScript (.pt), or a torch.export ExportedProgram (.pt2)
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "zoo",
        conflicts_with = "zoo"
    )]
    pub model: Option<PathBuf>,

    /// A model of the zoo instead, built eagerly with random weights (as `replay export
    /// --model` names them): what torch.compile compiles, where a TorchScript file is not
    #[arg(long, value_name = "NAME")]
    pub zoo: Option<String>,

    /// Compile the model with torch.compile in this mode (default, reduce-overhead or
    /// max-autotune; `default` when given alone), Inductor's kernel profiling on, and keep
    /// Inductor's cache and the recording of its generated kernels (kernels.json) in
    /// `inductor/` beside the trace
    #[arg(long, value_name = "MODE", value_parser = crate::cli::value_parsers::compile_mode(), num_args = 0..=1, default_missing_value = "default")]
    pub compile: Option<CompileMode>,

    /// Tokens in the input sequence
    #[arg(long, default_value_t = DEFAULT_SEQ_LEN, value_parser = crate::cli::value_parsers::positive::<i64>)]
    pub seq_len: i64,

    /// Sequences per forward pass
    #[arg(long, default_value_t = DEFAULT_BATCH, value_parser = crate::cli::value_parsers::positive::<i64>)]
    pub batch: i64,

    /// One input tensor of the model instead of token ids (repeatable; as `replay full --input`)
    #[arg(long = "input", value_name = "SPEC", value_parser = replay::model::input_spec::parse_input_spec)]
    pub inputs: Vec<InputSpec>,

    #[command(flatten)]
    pub device: DeviceArgs,

    /// Unprofiled forward passes before the profiled one
    #[arg(long, default_value_t = DEFAULT_CAPTURE_WARMUP, value_parser = crate::cli::value_parsers::whole::<u32>)]
    pub warmup: u32,

    /// Trace file to write (.json, or .json.gz to compress)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    /// Profile this many single steps, each in its own profiler session, and keep the one
    /// whose time is the median: a step profiled while the machine was busy elsewhere would
    /// stretch the host gaps the timeline prediction reads
    #[arg(long, default_value_t = DEFAULT_CAPTURE_CANDIDATES, value_name = "N", value_parser = crate::cli::value_parsers::positive::<u32>)]
    pub candidates: u32,

    /// Also record the kept step's PyTorch Execution Trace (torch.profiler's
    /// ExecutionTraceObserver) beside the trace, NAME.et.json for NAME.json: exact operator
    /// schemas and input values, linked to the trace's ops by record-function ids (`replay
    /// classify --execution-trace`). The observer's own cost is inside the profiled step
    #[arg(long)]
    pub execution_trace: bool,

    /// Switch TorchScript's fuser on for the CPU (off by default; on a GPU it is on), so a
    /// TorchScript model's element-wise chains run as fusion groups (`fused_*` ops), whose
    /// subgraphs and input types the capture records in the trace for `replay isolated`. Not
    /// chains on float16 tensors, nor bfloat16 ones where torch has no LLVM (the pip wheels):
    /// TorchScript leaves those unfused on the CPU, and the capture says so
    #[arg(long)]
    pub fuse_on_cpu: bool,
}

impl From<CaptureArgs> for CaptureOptions {
    fn from(args: CaptureArgs) -> Self {
        CaptureOptions {
            model: args.model.unwrap_or_default(),
            zoo: args.zoo,
            compile: args.compile,
            seq_len: args.seq_len,
            batch: args.batch,
            inputs: args.inputs,
            device: args.device.device,
            warmup: args.warmup,
            out: args.out,
            threads: args.threads.threads,
            candidates: args.candidates,
            execution_trace: args.execution_trace,
            fuse_on_cpu: args.fuse_on_cpu,
            ..CaptureOptions::default()
        }
    }
}

pub fn capture(args: CaptureArgs) -> anyhow::Result<()> {
    Ok(replay::pipeline::capture::run(
        &args.into(),
        &mut ConsoleObserver::new(false),
    )?)
}
