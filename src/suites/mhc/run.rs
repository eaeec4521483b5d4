//! One `replay bench mhc` run: each configuration (one batch size, or the sweep's six) on
//! its placement(s), rows appended to `benchmark_results.csv` as they finish, the seed's
//! console block per implementation, and with `--sweep-bs` the offload answer. Reports to
//! the suite driver's observer, never `println!`: the seed's console text as results, one
//! line per finished stage for the person watching.

use std::path::{Path, PathBuf};
use std::time::Duration;

use replay_core::export::rows::{CsvRows, Row};
use replay_core::measure::{MeasureConfig, MonotonicClock, Warmup};
use replay_core::shard::{RunStart, Shard, WorkList};
use replay_core::suite::{self, RowSink};

use super::bench::{case_order, MhcSettings, MhcSuite};
use super::offload::{answer, BatchResult, GpuProfile};
use super::rows::{console_block, COLUMNS, RESULTS_CSV};
use super::shape::{check_fits, host_memory_available, MhcDtype, MhcShape};
use super::stages::{Impl, Placement, Stage};
use super::MhcError;
use crate::pipeline::{Observer, Tick};

/// How stages are timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// The seed's loop: `warmup` untimed calls, then `iters` one-call samples.
    Fixed { warmup: u64, iters: usize },
    /// replay's stopping rule: at least `iters` samples, then until the median is within
    /// 0.5 % or `budget` is spent.
    UntilStable { iters: usize, budget: Duration },
}

impl Timing {
    pub fn config(self) -> MeasureConfig {
        match self {
            Timing::Fixed { warmup, iters } => MeasureConfig::fixed_runs(warmup, iters),
            // One call per sample (a stage takes milliseconds to seconds) and no minimum
            // warm-up time beyond the first call.
            Timing::UntilStable { iters, budget } => {
                let stable = MeasureConfig::until_stable(iters, budget);
                MeasureConfig {
                    warmup: Warmup {
                        min_time: Duration::ZERO,
                        ..stable.warmup
                    },
                    max_calls_per_sample: 1,
                    ..stable
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// One shape per batch size (the sweep's six, or one).
    pub shapes: Vec<MhcShape>,
    pub sweep: bool,
    /// Where stages 1–3 run first: `--device cpu` (offload simulation when a GPU is
    /// present) or `--device cuda:N`.
    pub placement: Placement,
    /// A GPU to measure too in a sweep (both devices present): the offload answer's GPU side.
    pub also_gpu: Option<usize>,
    pub impls: Vec<Impl>,
    pub threads: usize,
    pub timing: Timing,
    pub output_dir: PathBuf,
    /// The GPU profile of the answer on a machine without a GPU.
    pub gpu_profile: Option<PathBuf>,
    /// The configurations this run takes (`--shard I/N`; whole by default). A shard writes
    /// no offload answer: `replay merge` writes it from every shard's rows.
    pub shard: Shard,
}

/// The command name a sharded run's shard.json carries, and `replay merge` dispatches on.
pub const COMMAND: &str = "bench mhc";

/// The run's configurations in the order it runs them: each batch size on the first
/// placement, then (a sweep with both devices) each on the GPU. The unit `--shard` deals
/// out: a configuration's stages share inputs of gigabytes, made once.
pub fn configurations(options: &RunOptions) -> Vec<(Placement, usize)> {
    let mut placements = vec![options.placement];
    if let Some(gpu) = options.also_gpu {
        placements.push(Placement::Gpu { gpu });
    }
    placements
        .into_iter()
        .flat_map(|p| (0..options.shapes.len()).map(move |shape| (p, shape)))
        .collect()
}

/// The run's work list: one id per configuration.
pub fn work_list(options: &RunOptions) -> WorkList {
    WorkList::new(
        COMMAND,
        configurations(options)
            .into_iter()
            .map(|(p, shape)| format!("{} {}", p.key(), options.shapes[shape].describe()))
            .collect(),
    )
}

/// What every shard of one run must share, and what `replay merge` rebuilds the run's
/// options from (the work list holds the configurations themselves).
pub fn shard_settings(options: &RunOptions) -> serde_json::Value {
    let first = options.shapes.first();
    serde_json::json!({
        "batches": options.shapes.iter().map(|s| s.batch).collect::<Vec<_>>(),
        "seq": first.map(|s| s.seq),
        "dim": first.map(|s| s.dim),
        "n_streams": first.map(|s| s.streams),
        "dtype": first.map(|s| s.dtype.name()),
        "sweep": options.sweep,
        "placement": options.placement.key(),
        "also_gpu": options.also_gpu,
        "impls": options.impls.iter().map(|i| i.name()).collect::<Vec<_>>(),
        "threads": options.threads,
        "timing": format!("{:?}", options.timing),
        "gpu_profile": options.gpu_profile,
    })
}

/// The options of the run whose [`shard_settings`] these are, writing to `output_dir`; an
/// error says which setting is unreadable.
pub fn options_from_settings(
    settings: &serde_json::Value,
    output_dir: &Path,
) -> Result<RunOptions, MhcError> {
    let bad = |what: &str| MhcError::InvalidInput(format!("shard.json settings: {what}"));
    let number = |key: &str| {
        settings[key]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad(&format!("`{key}` is not a count")))
    };
    let dtype: MhcDtype = settings["dtype"]
        .as_str()
        .ok_or_else(|| bad("`dtype` is missing"))?
        .parse()
        .map_err(|e: String| bad(&e))?;
    let (seq, dim, streams) = (number("seq")?, number("dim")?, number("n_streams")?);
    let shapes = settings["batches"]
        .as_array()
        .ok_or_else(|| bad("`batches` is not a list"))?
        .iter()
        .map(|b| {
            let batch = b
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| bad("a batch size is not a count"))?;
            MhcShape::new(batch, seq, dim, streams, dtype)
        })
        .collect::<Result<Vec<_>, MhcError>>()?;
    let placement = settings["placement"]
        .as_str()
        .and_then(Placement::from_key)
        .ok_or_else(|| bad("`placement` is not cpu, offload:cuda:N or cuda:N"))?;
    let impls = settings["impls"]
        .as_array()
        .ok_or_else(|| bad("`impls` is not a list"))?
        .iter()
        .map(|i| {
            i.as_str()
                .ok_or_else(|| bad("an implementation is not a name"))?
                .parse::<Impl>()
                .map_err(|e| bad(&e))
        })
        .collect::<Result<Vec<_>, MhcError>>()?;
    Ok(RunOptions {
        shapes,
        sweep: settings["sweep"].as_bool().unwrap_or(false),
        placement,
        also_gpu: settings["also_gpu"]
            .as_u64()
            .and_then(|g| usize::try_from(g).ok()),
        impls,
        threads: number("threads")?,
        // Not used by a merge: nothing is timed again.
        timing: Timing::Fixed {
            warmup: 0,
            iters: 1,
        },
        output_dir: output_dir.to_path_buf(),
        gpu_profile: settings["gpu_profile"].as_str().map(PathBuf::from),
        shard: Shard::WHOLE,
    })
}

/// How many rows one configuration writes (six stages per implementation).
pub fn rows_per_configuration(options: &RunOptions) -> usize {
    case_order(&options.impls).len()
}

/// Rows to the CSV file and to the run's own list (for the console block and the answer).
struct Tee<'a> {
    csv: &'a mut CsvRows,
    rows: Vec<Row>,
}

impl RowSink for Tee<'_> {
    fn push(&mut self, row: &Row) -> replay_core::Result<()> {
        self.csv.push(row)?;
        self.rows.push(row.clone());
        Ok(())
    }
}

/// What the run wrote.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub csv: PathBuf,
    pub answer: Option<(PathBuf, PathBuf)>,
    pub failed_rows: usize,
}

/// Refuses, before anything is allocated, a single configuration that would not fit in host
/// memory (a sweep instead records the sizes that do not fit as rows and goes on).
pub fn check_single_fits(options: &RunOptions) -> Result<(), MhcError> {
    if options.sweep || matches!(options.placement, Placement::Gpu { .. }) {
        return Ok(());
    }
    let offload = matches!(options.placement, Placement::Offload { .. });
    for shape in &options.shapes {
        check_fits(
            shape.host_bytes_needed(offload),
            host_memory_available(),
            shape,
        )?;
    }
    Ok(())
}

/// Runs the configurations of `options.shard`, appending their rows; resuming (`start`), the
/// configurations whose rows are all in the file are taken from it (a configuration cut
/// short is cut off and run again), and a SIGINT or SIGTERM ends the run between two.
pub fn run(
    options: &RunOptions,
    start: &mut RunStart,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, MhcError> {
    check_single_fits(options)?;
    let per_configuration = rows_per_configuration(options);
    let mine = options.shard.positions(configurations(options).len()).len();
    let steps = mine * per_configuration;
    let mut step = 0;
    let csv_path = options.output_dir.join(RESULTS_CSV);
    let invalid = |e: replay_core::Error| MhcError::InvalidInput(e.to_string());
    let resumed = match (start.resumed, &start.record.rows) {
        (true, Some(rows)) => {
            replay_core::shard::recover::recover_rows(
                &csv_path,
                rows.start,
                &COLUMNS,
                per_configuration,
            )
            .map_err(invalid)?
            .rows
        }
        _ => Vec::new(),
    };
    let mut csv = CsvRows::open(&csv_path, &COLUMNS).map_err(invalid)?;
    if !start.resumed {
        start
            .remember_rows(RESULTS_CSV, csv.end().map_err(invalid)?)
            .map_err(invalid)?;
    }
    let mut done: Vec<Vec<Row>> = resumed
        .chunks(per_configuration.max(1))
        .map(<[Row]>::to_vec)
        .collect();
    done.reverse();
    if !done.is_empty() {
        say(
            observer,
            &format!(
                "resuming: {} of {mine} configurations already in {}",
                done.len(),
                csv_path.display()
            ),
        );
    }
    let mut results: Vec<BatchResult> = options
        .shapes
        .iter()
        .map(|&shape| BatchResult::new(shape))
        .collect();
    let mut failed_rows = 0;
    let mut ran = 0;
    for (position, (placement, index)) in configurations(options).into_iter().enumerate() {
        if !options.shard.owns(position) {
            continue;
        }
        let (shape, result) = (&options.shapes[index], &mut results[index]);
        let case_order: Vec<(Impl, Stage)> = case_order(&options.impls)
            .into_iter()
            .map(|c| (c.imp, c.stage))
            .collect();
        if let Some(rows) = done.pop() {
            // Already written by the run being resumed: counted, not run again.
            failed_rows += rows.iter().filter(|r| is_failed(r)).count();
            record(
                result,
                placement,
                &case_order.iter().copied().zip(rows).collect::<Vec<_>>(),
            );
            ran += 1;
            step += per_configuration;
            continue;
        }
        replay_core::shard::stop::check(ran, mine, "configurations")
            .map_err(|e| MhcError::InvalidInput(e.to_string()))?;
        ran += 1;
        say(
            observer,
            &format!(
                "Benchmarking on {}... ({})",
                placement.device_name(),
                shape.describe()
            ),
        );
        if let Placement::Offload { gpu } = placement {
            say(observer, &format!(
                "Offload simulation enabled: inputs on cuda:{gpu}, D2H/H2D through pinned host memory.\n  D2H Copy Info: Shape=({}, {}, {}, {}), Size={:.2} MB",
                shape.batch, shape.seq, shape.streams, shape.dim,
                shape.stream_bytes() as f64 / (1u64 << 20) as f64
            ));
        }
        let suite = MhcSuite::new(MhcSettings {
            shape: *shape,
            placement,
            impls: options.impls.clone(),
            threads: options.threads,
        });
        let mut tee = Tee {
            csv: &mut csv,
            rows: Vec::new(),
        };
        let cases = replay_core::suite::Suite::cases(&suite);
        suite::run(
            &suite,
            &(),
            &options.timing.config(),
            &MonotonicClock::new(),
            &mut tee,
            |p| {
                observer.item(&format!(
                    "  [{}/{}] {} {}: {} ({:.1} s)",
                    p.index + 1,
                    p.total,
                    p.case.imp.name(),
                    p.case.stage.label(),
                    match placement.not_applicable(p.case.stage) {
                        Some(_) => "not applicable",
                        None => p.status.as_str(),
                    },
                    p.elapsed.as_secs_f64()
                ));
                step += 1;
                observer.progress(Tick {
                    step,
                    steps,
                    round: 0,
                    rounds: 1,
                    name: &shape.describe(),
                });
            },
        )
        .map_err(|e| MhcError::InvalidInput(e.to_string()))?;
        drop(suite);
        let rows = tee.rows;
        for imp in &options.impls {
            let mine: Vec<(Stage, Row)> = cases
                .iter()
                .zip(&rows)
                .filter(|(c, _)| c.imp == *imp)
                .map(|(c, r)| (c.stage, r.clone()))
                .collect();
            say(observer, &console_block(*imp, &mine));
        }
        failed_rows += rows.iter().filter(|r| is_failed(r)).count();
        record(
            result,
            placement,
            &cases
                .iter()
                .map(|c| (c.imp, c.stage))
                .zip(rows)
                .collect::<Vec<_>>(),
        );
    }
    observer.stage_finished(crate::pipeline::Stage::Suite(COMMAND));
    let answer_files = if options.sweep && options.shard == Shard::WHOLE {
        let (md, svg, markdown) = write_answer(options, &results)?;
        say(observer, &markdown);
        Some((md, svg))
    } else {
        None
    };
    Ok(RunOutcome {
        csv: csv_path,
        answer: answer_files,
        failed_rows,
    })
}

/// The seed's console text: a result line.
fn say(observer: &mut dyn Observer, text: &str) {
    observer.result(&format!("{text}\n"));
}

/// The offload answer of a sweep (`offload_answer.md` and `.svg` in the output folder): the
/// two files and the answer's text.
pub fn write_answer(
    options: &RunOptions,
    results: &[BatchResult],
) -> Result<(PathBuf, PathBuf, String), MhcError> {
    let profile = match &options.gpu_profile {
        Some(path) if path.exists() => Some(GpuProfile::load(path, options.shapes[0].dtype.name())),
        _ => None,
    };
    let profile_ref = match &profile {
        Some(Ok(p)) => Ok(p),
        Some(Err(e)) => Err(e.to_string()),
        None => Err(match &options.gpu_profile {
            Some(p) => format!(
                "{} does not exist (replay ships it in profiles/: set {} to the folder that \
                 holds profiles/, or give --gpu-profile with a profile `replay calibrate` wrote \
                 on that GPU)",
                p.display(),
                crate::shipped::DATA_DIR_VAR
            ),
            None => "no --gpu-profile given".to_string(),
        }),
    };
    let built = answer(
        results,
        profile_ref.as_ref().map_err(|s| s.as_str()).copied(),
    )?;
    let md = options.output_dir.join("offload_answer.md");
    let svg = options.output_dir.join("offload_answer.svg");
    write(&md, &built.markdown)?;
    write(&svg, &built.svg)?;
    Ok((md, svg, built.markdown))
}

/// Each batch size's numbers from the rows of every configuration (`groups`, in
/// [`configurations`]' order, each in the suite's case order): what `replay merge` rebuilds
/// the offload answer from.
pub fn results_from_rows(options: &RunOptions, groups: &[Vec<Row>]) -> Vec<BatchResult> {
    let mut results: Vec<BatchResult> = options
        .shapes
        .iter()
        .map(|&shape| BatchResult::new(shape))
        .collect();
    let cases: Vec<(Impl, Stage)> = case_order(&options.impls)
        .into_iter()
        .map(|c| (c.imp, c.stage))
        .collect();
    for ((placement, index), rows) in configurations(options).into_iter().zip(groups) {
        let pairs: Vec<((Impl, Stage), Row)> =
            cases.iter().copied().zip(rows.iter().cloned()).collect();
        record(&mut results[index], placement, &pairs);
    }
    results
}

/// A row that failed (neither measured, nor not applicable, nor not implemented).
fn is_failed(row: &Row) -> bool {
    !matches!(status(row), "ok" | "not_applicable" | "not_implemented")
}

fn status(row: &Row) -> &str {
    row.get("Status").and_then(|v| v.as_str()).unwrap_or("")
}

fn time_ms(row: &Row) -> Option<f64> {
    row.get("Time(ms)").and_then(|v| v.as_f64())
}

/// Keeps the fastest implementation's totals of one configuration on one placement.
fn record(result: &mut BatchResult, placement: Placement, rows: &[((Impl, Stage), Row)]) {
    let faster = |slot: &mut Option<(f64, Impl)>, ms: f64, imp: Impl| {
        if slot.is_none_or(|(best, _)| ms < best) {
            *slot = Some((ms, imp));
        }
    };
    for ((imp, stage), row) in rows {
        if *stage != Stage::Total {
            continue;
        }
        let Some(ms) = time_ms(row) else {
            if result.failure.is_none() && !matches!(status(row), "not_implemented") {
                let note = row.get("Note").and_then(|v| v.as_str()).unwrap_or("");
                result.failure = Some(format!("{}: {note}", status(row)));
            }
            continue;
        };
        match placement {
            Placement::CpuOnly => faster(&mut result.cpu_compute_ms, ms, *imp),
            Placement::Offload { .. } => faster(&mut result.cpu_offloaded_ms, ms, *imp),
            Placement::Gpu { .. } => faster(&mut result.gpu_total_ms, ms, *imp),
        }
    }
    if let Placement::Offload { .. } = placement {
        // Stages 1–3 of the offload run, for the table's compute column.
        for imp in [Impl::Torch, Impl::Fused] {
            let parts: Option<Vec<f64>> = [Stage::Linear, Stage::Sinkhorn, Stage::Apply]
                .iter()
                .map(|s| {
                    rows.iter()
                        .find(|((i, st), _)| *i == imp && st == s)
                        .and_then(|(_, r)| time_ms(r))
                })
                .collect();
            if let Some(parts) = parts {
                faster(&mut result.cpu_compute_ms, parts.iter().sum(), imp);
            }
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), MhcError> {
    std::fs::write(path, text).map_err(|source| MhcError::Io {
        context: format!("cannot write {}", path.display()),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::mhc::MhcDtype;

    fn row(status: &str, ms: Option<f64>) -> Row {
        let r = Row::new().with("Status", status).with("Note", "why");
        match ms {
            Some(ms) => r.with("Time(ms)", ms),
            None => r,
        }
    }

    fn empty(batch: usize) -> BatchResult {
        BatchResult {
            shape: MhcShape::new(batch, 8, 16, 4, MhcDtype::Float32).unwrap(),
            cpu_compute_ms: None,
            cpu_offloaded_ms: None,
            gpu_total_ms: None,
            failure: None,
        }
    }

    #[test]
    fn the_fastest_total_of_each_placement_is_kept() {
        let rows = vec![
            ((Impl::Torch, Stage::Linear), row("ok", Some(5.0))),
            ((Impl::Torch, Stage::Sinkhorn), row("ok", Some(2.0))),
            ((Impl::Torch, Stage::Apply), row("ok", Some(3.0))),
            ((Impl::Torch, Stage::Total), row("ok", Some(12.0))),
            ((Impl::Fused, Stage::Linear), row("ok", Some(1.0))),
            ((Impl::Fused, Stage::Sinkhorn), row("ok", Some(0.1))),
            ((Impl::Fused, Stage::Apply), row("ok", Some(0.9))),
            ((Impl::Fused, Stage::Total), row("ok", Some(6.0))),
        ];
        let mut r = empty(4);
        record(&mut r, Placement::Offload { gpu: 0 }, &rows);
        assert_eq!(r.cpu_offloaded_ms, Some((6.0, Impl::Fused)));
        assert_eq!(r.cpu_compute_ms, Some((2.0, Impl::Fused)));
        let mut g = empty(4);
        record(&mut g, Placement::Gpu { gpu: 0 }, &rows);
        assert_eq!(g.gpu_total_ms, Some((6.0, Impl::Fused)));
        assert_eq!(g.cpu_compute_ms, None);
    }

    #[test]
    fn a_failed_total_is_remembered_as_the_reason() {
        let rows = vec![((Impl::Torch, Stage::Total), row("oom", None))];
        let mut r = empty(32);
        record(&mut r, Placement::CpuOnly, &rows);
        assert_eq!(r.cpu_compute_ms, None);
        assert_eq!(r.failure.as_deref(), Some("oom: why"));
    }

    #[test]
    fn the_seeds_loop_is_exactly_warmup_and_iters() {
        let c = Timing::Fixed {
            warmup: 3,
            iters: 10,
        }
        .config();
        assert_eq!(c.warmup.min_calls, 3);
        assert_eq!(c.max_calls_per_sample, 1);
    }
}
