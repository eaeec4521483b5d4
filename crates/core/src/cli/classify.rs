//! `replay classify`: a profiler trace becomes classified kernel signatures.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::execution_trace;
use crate::export;
use crate::inductor;
use crate::trace;

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// PyTorch profiler (Kineto) Chrome trace, plain JSON or gzipped (one member or many);
    /// `-` reads standard input. Large traces are streamed: the JSON is never in memory whole
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,

    /// Signature file to write [default: signatures/<trace name>.json]
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Print the signature file to stdout instead of the table
    #[arg(long)]
    pub json: bool,

    /// The Inductor cache `replay capture --compile` kept (its `inductor/` folder, holding
    /// kernels.json), naming where each generated kernel's code is [default: inductor/ beside
    /// the trace, when there is one]
    #[arg(long, value_name = "DIR")]
    pub inductor_cache: Option<PathBuf>,

    /// The Execution Trace recorded in the same step (`replay capture --execution-trace`
    /// writes one beside the trace), linked by record-function ids: each signature whose op
    /// linked records the exact overload it called (`op.schema`), its argument values and the
    /// recorded value ranges of its integer tensors
    #[arg(long, value_name = "FILE")]
    pub execution_trace: Option<PathBuf>,
}

/// `signatures/h100_bert_small_infer.json` for `.../h100_bert_small_infer.json.gz`;
/// `signatures/stdin.json` for standard input (`-`).
pub fn default_output(trace: &Path) -> PathBuf {
    if trace.as_os_str() == trace::STDIN_PATH {
        return PathBuf::from("signatures").join("stdin.json");
    }
    let name = trace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    let stem = name
        .trim_end_matches(".gz")
        .trim_end_matches(".json")
        .to_string();
    PathBuf::from("signatures").join(format!("{stem}.json"))
}

pub fn run(args: ClassifyArgs) -> anyhow::Result<()> {
    let loaded = trace::load(&args.trace).map_err(crate::Error::from)?;
    let mut file =
        inductor::classify_with_cache(&loaded, &args.trace, args.inductor_cache.as_deref())
            .map_err(crate::Error::from)?;
    let et_summary = match &args.execution_trace {
        Some(path) => Some(
            execution_trace::attach::attach_file(&mut file, &loaded, &args.trace, path)
                .map_err(crate::Error::from)?
                .summary(),
        ),
        None => None,
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_output(&args.trace));
    let bytes = export::json::to_bytes(&file);
    export::write_atomic(&out, &bytes)?;
    if args.json {
        print!("{}", String::from_utf8_lossy(&bytes));
    } else {
        print!("{}", file.summary_table());
        if let Some(summary) = et_summary {
            println!("{summary}");
        }
        println!("wrote {}", out.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_output_names() {
        assert_eq!(
            default_output(Path::new("../x/h100_vit_infer.json.gz")),
            PathBuf::from("signatures/h100_vit_infer.json")
        );
        assert_eq!(
            default_output(Path::new("t.json")),
            PathBuf::from("signatures/t.json")
        );
        assert_eq!(
            default_output(Path::new("-")),
            PathBuf::from("signatures/stdin.json")
        );
    }
}
