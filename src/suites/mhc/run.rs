//! One `replay bench mhc` run: each configuration (one batch size, or the sweep's six) on
//! its placement(s), rows appended to `benchmark_results.csv` as they finish, the seed's
//! console block per implementation, and with `--sweep-bs` the offload answer. The core's
//! grid runner (`replay_core::suite::run_grid`) owns the loop: shard slicing by configuration,
//! `--resume`, stops between configurations, the tally. Reports to the suite driver's observer, never `println!`: the seed's console text as results, one
//! line per finished stage for the person watching.

use std::path::{Path, PathBuf};
use std::time::Duration;

use replay_core::export::rows::{CsvRows, Row};
use replay_core::measure::{self, MeasureConfig, MonotonicClock};
use replay_core::shard::{RunStart, Shard, WorkList};
use replay_core::suite;

use super::bench::case_order;
use super::console::{is_failed, record, say, Console};
use super::grid::MhcGrid;
use super::offload::{answer, BatchResult, GpuProfile};
use super::rows::{COLUMNS, RESULTS_CSV};
use super::shape::{check_fits, MhcDtype, MhcShape};
use super::stages::{Impl, Placement, Stage};
use super::MhcError;
use crate::device::{CudaDevice, DeviceSpec};
use crate::pipeline::Observer;
use replay_core::memory_size::available_bytes;

/// How stages are timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// The seed's loop: `warmup` untimed calls, then `iters` one-call samples.
    Fixed { warmup: u64, iters: usize },
    /// replay's stopping rule: at least `iters` samples, then until the median is within
    /// 0.5 % or `budget` is spent.
    UntilStable { iters: usize, budget: Duration },
}

/// Rounds a stage's `--max-time` budget and minimum samples are split into (each round at
/// least 2 samples), its implementation's other stages timed between them.
pub const UNTIL_STABLE_ROUNDS: u32 = 5;

impl Timing {
    /// The core's timing of one stage in one window.
    fn alone(self) -> measure::Timing {
        match self {
            Timing::Fixed { warmup, iters } => measure::Timing::fixed(warmup, iters),
            // One call per sample (a stage takes milliseconds to seconds) and no minimum
            // warm-up time beyond the first call.
            Timing::UntilStable { iters, budget } => measure::Timing {
                one_call_per_sample: true,
                ..measure::Timing::grid(iters, budget)
            },
        }
    }

    /// A stage timed in one window (what the suite runner is handed; the stages themselves
    /// are timed in [`Timing::round_configs`]).
    pub fn config(self) -> MeasureConfig {
        self.alone().config()
    }

    /// Each round of an implementation's interleaved stages: with `--iters N`, N rounds of
    /// one sample per stage (the warm-up calls before the first); with `--max-time`,
    /// [`UNTIL_STABLE_ROUNDS`] rounds of a share of the budget and of the samples, each
    /// stopping by the core's rule for that stage alone.
    pub fn round_configs(self) -> Vec<MeasureConfig> {
        let rounds = match self {
            Timing::Fixed { iters, .. } => u32::try_from(iters).unwrap_or(u32::MAX),
            Timing::UntilStable { .. } => UNTIL_STABLE_ROUNDS,
        };
        measure::Timing {
            rounds: Some(rounds),
            ..self.alone()
        }
        .round_configs()
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
    /// Whether a sweep (both devices present) measures the opened `gpu` too, everything on
    /// it: the offload answer's GPU side.
    pub also_gpu: bool,
    /// The GPU the command opened: the offload simulation's, `--device cuda`'s (`None` on
    /// the CPU alone, and in a merge, which times nothing).
    pub gpu: Option<CudaDevice>,
    /// Which GPU the placements use, as rows, console and records name it: the opened
    /// `gpu`'s (`CudaDevice::spec`), or in a merge the one the shards recorded.
    pub gpu_spec: Option<DeviceSpec>,
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
    if options.also_gpu {
        placements.push(Placement::Gpu);
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
            .map(|(p, shape)| {
                format!(
                    "{} {}",
                    p.key(options.gpu_spec),
                    options.shapes[shape].describe()
                )
            })
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
        "placement": options.placement.key(options.gpu_spec),
        // The GPU's index or null, as shards have always recorded it (only read as "whether").
        "also_gpu": options.gpu_spec.filter(|_| options.also_gpu).and_then(|gpu| match gpu {
            DeviceSpec::Cuda(index) => Some(index),
            DeviceSpec::Cpu => None,
        }),
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
    let (placement, gpu_spec) = settings["placement"]
        .as_str()
        .and_then(Placement::from_key)
        .ok_or_else(|| bad("`placement` is not cpu, offload:cuda:N or cuda:N"))?;
    // The GPU's index (the one `placement` names) or null.
    let also_gpu = match &settings["also_gpu"] {
        serde_json::Value::Null => false,
        serde_json::Value::Number(_) => true,
        _ => return Err(bad("`also_gpu` is not a GPU's index or null")),
    };
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
        also_gpu,
        gpu: None,
        gpu_spec,
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
    if options.sweep || options.placement == Placement::Gpu {
        return Ok(());
    }
    let offload = options.placement == Placement::Offload;
    for shape in &options.shapes {
        check_fits(shape.host_bytes_needed(offload), available_bytes(), shape)?;
    }
    Ok(())
}

/// Runs the configurations of `options.shard` through the core's grid runner, appending
/// their rows; resuming (`start`), the configurations whose rows are all in the file are
/// taken from it (a configuration cut short is cut off and run again), and a SIGINT or
/// SIGTERM ends the run between two.
pub fn run(
    options: &RunOptions,
    start: &mut RunStart,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, MhcError> {
    check_single_fits(options)?;
    let configurations = configurations(options);
    let grid = MhcGrid::new(
        configurations
            .iter()
            .map(|&(placement, shape)| (placement, options.shapes[shape]))
            .collect(),
        options.impls.clone(),
        options.threads,
        options.gpu.clone(),
        options.timing.round_configs(),
    );
    let per_configuration = grid.rows_per_configuration();
    let positions = options.shard.positions(configurations.len());
    let mine = positions.len();
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
    let mut console = Console {
        observer,
        configurations: &configurations,
        gpu: options.gpu_spec,
        shapes: &options.shapes,
        impls: &options.impls,
        grid: &grid,
        results: options
            .shapes
            .iter()
            .map(|&shape| BatchResult::new(shape))
            .collect(),
        failed_rows: 0,
        per_configuration,
        steps: mine * per_configuration,
    };
    // Already written by the run being resumed: counted, not run again.
    let case_order: Vec<(Impl, Stage)> = case_order(&options.impls)
        .into_iter()
        .map(|c| (c.imp, c.stage))
        .collect();
    let done = resumed.chunks(per_configuration.max(1));
    let resumed_configurations = done.len();
    for (rows, &position) in done.zip(&positions) {
        let (placement, index) = configurations[position];
        console.failed_rows += rows.iter().filter(|r| is_failed(r)).count();
        let pairs: Vec<_> = case_order.iter().copied().zip(rows.to_vec()).collect();
        record(&mut console.results[index], placement, &pairs);
    }
    if resumed_configurations > 0 {
        say(
            console.observer,
            &format!(
                "resuming: {resumed_configurations} of {mine} configurations already in {}",
                csv_path.display()
            ),
        );
    }
    let stage = crate::pipeline::Stage::Suite(COMMAND);
    console.observer.stage_started(
        stage,
        &format!(
            "{mine} configuration{}{} of {per_configuration} rows, {}, writing {}",
            if mine == 1 { "" } else { "s" },
            if options.shard == Shard::WHOLE {
                String::new()
            } else {
                format!(" (shard {} of {})", options.shard, configurations.len())
            },
            timing_words(options.timing),
            csv_path.display()
        ),
    );
    let ran = suite::run_grid(
        &grid,
        options.shard,
        &resumed,
        &(),
        &options.timing.config(),
        &MonotonicClock::new(),
        &mut csv,
        &mut console,
    );
    console.observer.stage_finished(stage);
    ran.map_err(invalid)?;
    let Console {
        observer,
        results,
        failed_rows,
        ..
    } = console;
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

/// How stages are timed, in words for the run's header line.
fn timing_words(timing: Timing) -> String {
    match timing {
        Timing::Fixed { warmup, iters } => format!("{warmup} warm-up calls and {iters} samples"),
        Timing::UntilStable { iters, budget } => format!(
            "at least {iters} samples, until stable or {:.1} s",
            budget.as_secs_f64()
        ),
    }
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

fn write(path: &Path, text: &str) -> Result<(), MhcError> {
    std::fs::write(path, text).map_err(|source| MhcError::Io {
        context: format!("cannot write {}", path.display()),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep's options on a machine with both devices, as `bench mhc` makes them, where
    /// `gpu_spec` is the opened GPU's (no GPU can be opened here: none is).
    fn sweep_with_a_gpu() -> RunOptions {
        RunOptions {
            shapes: [1, 2]
                .iter()
                .map(|&b| MhcShape::new(b, 8, 16, 4, MhcDtype::Float32).unwrap())
                .collect(),
            sweep: true,
            placement: Placement::Offload,
            also_gpu: true,
            gpu: None,
            gpu_spec: Some(DeviceSpec::Cuda(1)),
            impls: vec![Impl::Torch],
            threads: 1,
            timing: Timing::Fixed {
                warmup: 0,
                iters: 1,
            },
            output_dir: PathBuf::from("out"),
            gpu_profile: None,
            shard: Shard::WHOLE,
        }
    }

    #[test]
    fn the_gpu_is_named_from_its_spec_and_read_back_from_the_settings() {
        let options = sweep_with_a_gpu();
        assert_eq!(
            work_list(&options).ids,
            [
                "offload:cuda:1 B=1 T=8 D=16 n=4 float32",
                "offload:cuda:1 B=2 T=8 D=16 n=4 float32",
                "cuda:1 B=1 T=8 D=16 n=4 float32",
                "cuda:1 B=2 T=8 D=16 n=4 float32",
            ]
        );
        let settings = shard_settings(&options);
        assert_eq!(settings["placement"], "offload:cuda:1");
        assert_eq!(settings["also_gpu"], 1);
        let back = options_from_settings(&settings, Path::new("merged")).unwrap();
        assert_eq!(back.placement, Placement::Offload);
        assert_eq!(back.gpu_spec, Some(DeviceSpec::Cuda(1)));
        assert!(back.also_gpu);
        assert_eq!(work_list(&back).ids, work_list(&options).ids);
    }

    #[test]
    fn a_sweep_without_the_gpu_side_records_null_and_bad_settings_are_named() {
        let mut options = sweep_with_a_gpu();
        options.also_gpu = false;
        let mut settings = shard_settings(&options);
        assert_eq!(settings["also_gpu"], serde_json::Value::Null);
        let back = options_from_settings(&settings, Path::new("merged")).unwrap();
        assert!(!back.also_gpu);
        assert_eq!(configurations(&back).len(), 2);
        settings["also_gpu"] = "cuda:1".into();
        let err = options_from_settings(&settings, Path::new("merged")).unwrap_err();
        assert!(err.to_string().contains("`also_gpu`"), "{err}");
        settings["placement"] = "offload:cuda:?".into();
        let err = options_from_settings(&settings, Path::new("merged")).unwrap_err();
        assert!(err.to_string().contains("`placement`"), "{err}");
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

    #[test]
    fn the_seeds_loop_in_rounds_is_one_sample_a_round_after_the_warm_up() {
        let rounds = Timing::Fixed {
            warmup: 3,
            iters: 10,
        }
        .round_configs();
        assert_eq!(rounds.len(), 10);
        let warmups: Vec<u64> = rounds.iter().map(|c| c.warmup.min_calls).collect();
        assert_eq!(warmups, [3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        for c in &rounds {
            assert_eq!(format!("{:?}", c.stopping), "MinSamples(1)");
            assert_eq!(c.max_calls_per_sample, 1);
        }
        let stable = Timing::UntilStable {
            iters: 10,
            budget: Duration::from_secs(1),
        }
        .round_configs();
        assert_eq!(stable.len(), UNTIL_STABLE_ROUNDS as usize);
        assert!(
            format!("{:?}", stable[0].stopping).contains("200ms"),
            "{:?}",
            stable[0].stopping
        );
    }
}
