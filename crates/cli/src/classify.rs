//! `replay classify`: a profiler trace becomes classified kernel signatures.

use std::path::{Path, PathBuf};

use clap::Args;

use replay_core::execution_trace;
use replay_core::export;
use replay_core::inductor;
use replay_core::ranks;
use replay_core::signature::fold::{self, budget::MemoryBudget};
use replay_core::trace;

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// PyTorch profiler (Kineto) Chrome trace, plain JSON or gzipped (one member or many);
    /// `-` reads standard input, and large traces are streamed (never in memory whole). Several files or a
    /// glob (`'rank*.json.gz'`, expanded by replay, so it works quoted) are the ranks of one
    /// job, read in parallel into one signature file whose signatures carry per-rank counts
    /// and times (each trace's rank is its distributedInfo.rank, else its place in the list)
    #[arg(long, value_name = "FILE|GLOB", num_args = 1.., required = true)]
    pub trace: Vec<PathBuf>,

    /// Signature file to write [default: signatures/<trace name>.json; for several ranks,
    /// the names' common beginning]
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

    /// Memory the classify may use (bytes, or with K, M, G, T). A trace whose in-memory
    /// classify would need more (about 2 bytes per byte of JSON) is classified streamed:
    /// compact records sorted on disk (in TMPDIR) beyond the budget, memory independent of
    /// the trace's size, the same signature file. Without this, a trace of 256 MiB of JSON
    /// or more streams too (it is faster so); with it, a trace that fits is held. Standard
    /// input streams when this is given, or else when it runs past 64 MiB (its first
    /// 64 MiB are read ahead to see). Streamed, a large trace takes 60-180 MB by the budget
    /// (its blocks of JSON are sized to it): a budget under about 96 MB may not be met
    /// [default: half the memory available]
    #[arg(long, value_name = "SIZE", value_parser = replay_core::memory_size::parse_size)]
    pub memory_budget: Option<u64>,
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
    let paths = ranks::expand(&args.trace).map_err(replay_core::Error::from)?;
    if let [trace] = paths.as_slice() {
        return run_one(&args, trace);
    }
    if args.execution_trace.is_some() {
        return Err(replay_core::Error::BadInput {
            path: paths[0].clone(),
            message: format!(
                "--execution-trace links one trace; {} traces were given (classify each rank \
                 with its own Execution Trace, then `replay merge` the files)",
                paths.len()
            ),
        }
        .into());
    }
    let workers = ranks::parallel::workers_for(paths.len());
    // The ranks read at once share the budget.
    let budget = MemoryBudget::from_option(args.memory_budget).shared_by(workers);
    if let Some(note) = budget.floor_note() {
        if paths.iter().any(|path| budget.streams(path)) {
            eprintln!("{note}; it is the share of each of the {workers} ranks read at once");
        }
    }
    let files = ranks::parallel::map_bounded(&paths, workers, |path| {
        trace::with_cores_shared_by(workers, || classify_rank(path, &budget, &args))
    })?;
    let file = ranks::job_file::merge_files(&paths, files).map_err(replay_core::Error::from)?;
    let out = args.out.clone().unwrap_or_else(|| job_output(&paths));
    let bytes = export::json::to_bytes(&file);
    export::write_atomic(&out, &bytes)?;
    if args.json {
        print!("{}", String::from_utf8_lossy(&bytes));
    } else {
        print!("{}", file.summary_table());
        print!("{}", file.ranks_table());
        println!("wrote {}", out.display());
    }
    Ok(())
}

/// One rank of a job: streamed when its share of the budget says so, else held.
fn classify_rank(
    path: &Path,
    budget: &MemoryBudget,
    args: &ClassifyArgs,
) -> Result<replay_core::signature::schema::SignatureFile, replay_core::Error> {
    if budget.streams(path) {
        if let Some(mut file) = classify_streamed(path, budget)? {
            inductor::attach::attach_cache(&mut file, path, args.inductor_cache.as_deref())
                .map_err(replay_core::Error::from)?;
            return Ok(file);
        }
    }
    let loaded = trace::load(path).map_err(replay_core::Error::from)?;
    inductor::classify_with_cache(&loaded, path, args.inductor_cache.as_deref())
        .map_err(replay_core::Error::from)
}

/// `signatures/<common beginning of the names>.json` for a job's rank traces.
pub fn job_output(paths: &[PathBuf]) -> PathBuf {
    let stems: Vec<String> = paths
        .iter()
        .map(|p| {
            default_output(p)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let first = stems.first().cloned().unwrap_or_default();
    let mut common = first.len();
    for stem in &stems[1..] {
        common = common.min(
            first
                .char_indices()
                .zip(stem.chars())
                .find(|((_, a), b)| a != b)
                .map_or(first.len().min(stem.len()), |((i, _), _)| i),
        );
    }
    let name = first[..common].trim_end_matches(['_', '-', '.']);
    let name = if name.is_empty() { "job" } else { name };
    PathBuf::from("signatures").join(format!("{name}.json"))
}

fn run_one(args: &ClassifyArgs, trace_path: &Path) -> anyhow::Result<()> {
    let budget = MemoryBudget::from_option(args.memory_budget);
    // The Execution Trace is linked to the loaded trace's events: it is read in memory.
    let streamed = if args.execution_trace.is_none() && budget.streams(trace_path) {
        if let Some(note) = budget.floor_note() {
            eprintln!("{note}");
        }
        classify_streamed(trace_path, &budget)?
    } else {
        None
    };
    let (file, et_summary) = match streamed {
        Some(mut file) => {
            inductor::attach::attach_cache(&mut file, trace_path, args.inductor_cache.as_deref())
                .map_err(replay_core::Error::from)?;
            (file, None)
        }
        None => {
            let mut loaded = trace::load(trace_path).map_err(replay_core::Error::from)?;
            // Linked first: a trace recorded without shapes takes the ET's before classifying.
            let linked = match &args.execution_trace {
                Some(path) => Some(
                    execution_trace::attach::link_file(&mut loaded, trace_path, path)
                        .map_err(replay_core::Error::from)?,
                ),
                None => None,
            };
            let mut file =
                inductor::classify_with_cache(&loaded, trace_path, args.inductor_cache.as_deref())
                    .map_err(replay_core::Error::from)?;
            let et_summary = linked.map(|linked| {
                execution_trace::attach::attach(&mut file, &loaded, &linked).summary()
            });
            (file, et_summary)
        }
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_output(trace_path));
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

/// The streamed classify ([`fold`]); `None` for a trace without GPU activity, which is
/// classified in memory (by its host ops) unless it came from standard input.
fn classify_streamed(
    trace_path: &Path,
    budget: &MemoryBudget,
) -> Result<Option<replay_core::signature::schema::SignatureFile>, replay_core::Error> {
    match fold::classify_streamed(trace_path, &fold::FoldOptions::for_budget(budget)) {
        Ok(file) => Ok(Some(file)),
        Err(fold::FoldError::Trace(e)) => Err(e.into()),
        Err(fold::FoldError::NoGpuActivity { path }) if path.as_os_str() != trace::STDIN_PATH => {
            eprintln!(
                "note: {} has no GPU activity: classifying its host ops in memory",
                path.display()
            );
            Ok(None)
        }
        Err(fold::FoldError::NoGpuActivity { path }) => Err(replay_core::Error::BadInput {
            path,
            message: "no GPU activity: a trace of host ops alone is classified in memory, \
                      which standard input is not with --memory-budget, beyond 64 MiB, or a \
                      gzip of 256 MiB of JSON or more (give the file)"
                .into(),
        }),
        Err(fold::FoldError::Spill(e)) => Err(replay_core::Error::Io {
            context: "the streamed classify".into(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
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

    #[test]
    fn a_jobs_default_output_is_the_names_common_beginning() {
        let paths = |names: &[&str]| names.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            job_output(&paths(&["x/rank0.json.gz", "x/rank1.json.gz"])),
            PathBuf::from("signatures/rank.json")
        );
        assert_eq!(
            job_output(&paths(&["a/train_r0.json", "a/train_r12.json"])),
            PathBuf::from("signatures/train_r.json")
        );
        assert_eq!(
            job_output(&paths(&["a.json", "b.json"])),
            PathBuf::from("signatures/job.json")
        );
    }
}
