//! Isolated: replay every signature of a signature file alone on a device and time it,
//! writing the results after every signature.

use std::cell::RefCell;
use std::ops::ControlFlow;

use crate::error::Context as _;

use crate::device::cache_flush::{CpuCacheFlusher, CudaL2Flusher};
use crate::device::Device;
use crate::export::{self, OutputDir, OutputFile};
use crate::kernels::KernelCache;
use crate::measure::MonotonicClock;
use crate::replay::isolated::{self, ColdFlush, IsolatedResults, RunConfig};
use crate::signature;

use super::isolated_windowed;
use super::observer::{Observer, Stage, Tick};
use super::options::IsolatedOptions;
use super::suite_command::{ShardRecord, SuiteCommand};
use crate::replay::isolated_journal::IsolatedJournal;
use replay_core::shard::{RunRecord, RunStart, Shard, WorkList};

/// `replay isolated` as a suite command: reads the signature file, replays this shard's
/// units, and reports a summary; a shard that replayed every unit of its slice leaves its
/// shard.json (an interrupted one does not: `replay merge` then names it missing).
pub struct IsolatedCommand {
    pub options: IsolatedOptions,
    /// The signature file, once read (or classified from `--trace`).
    file: Option<signature::schema::SignatureFile>,
    /// A signature file too large to read whole, once scanned: replayed in windows.
    windowed: Option<Box<isolated_windowed::Windowed>>,
    /// What its replay measured, once run.
    done: Option<IsolatedResults>,
    /// `--op-timeout`: a unit measured longer is abandoned as failed ([`crate::replay::op_watchdog`]).
    pub op_timeout: Option<std::time::Duration>,
}

impl IsolatedCommand {
    pub fn new(options: IsolatedOptions) -> IsolatedCommand {
        IsolatedCommand {
            options,
            file: None,
            windowed: None,
            done: None,
            op_timeout: None,
        }
    }

    /// The signature file: read, or a trace classified (with its Execution Trace, when
    /// given) into `kernels`; once.
    fn file(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<&signature::schema::SignatureFile, crate::Error> {
        if self.file.is_none() {
            let options = &self.options;
            let file = match &options.trace {
                Some(trace) => {
                    let mut loaded = crate::trace::load(trace).map_err(crate::Error::from)?;
                    super::classify::classify_into(
                        &mut loaded,
                        trace,
                        options.inductor_cache.as_deref(),
                        options.execution_trace.as_deref(),
                        &options.kernels,
                        observer,
                    )?
                    .0
                }
                None => signature::read_file(&options.kernels)?,
            };
            self.file = Some(file);
        }
        Ok(self.file.as_ref().expect("read above"))
    }

    /// Whether the signature file is one to replay in windows (scanned once, streaming; a
    /// file of at most one window, or one classified from `--trace`, is read whole).
    fn scan(&mut self) -> Result<bool, crate::Error> {
        if self.file.is_none() && self.windowed.is_none() && self.options.trace.is_none() {
            let window = isolated_windowed::WINDOW_SIGNATURES;
            if let isolated_windowed::Reading::Windowed(w) =
                isolated_windowed::open(&self.options.kernels, window)?
            {
                self.windowed = Some(w);
            }
        }
        Ok(self.windowed.is_some())
    }

    /// What makes two runs' (or two shards') numbers comparable: the same budget, rounds,
    /// cache state and roofline profile.
    fn settings(&self) -> serde_json::Value {
        let options = &self.options;
        serde_json::json!({
            "config": run_config(options),
            "profile": options.profile.as_ref().map(|p| p.display().to_string()),
            "energy": options.energy.probe,
        })
    }
}

impl SuiteCommand for IsolatedCommand {
    fn command(&self) -> &'static str {
        replay_core::shard::isolated::COMMAND
    }

    fn unit(&self) -> &'static str {
        "replay units"
    }

    fn output_dir(&self) -> std::path::PathBuf {
        self.options.output_dir.clone()
    }

    fn identity(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<(WorkList, serde_json::Value), crate::Error> {
        if self.scan()? {
            unreachable!("a windowed run is recorded by its work list's hash (run_record)");
        }
        let list = isolated::work_list(self.file(observer)?);
        Ok((list, self.settings()))
    }

    fn run_record(
        &mut self,
        slice: Shard,
        observer: &mut dyn Observer,
    ) -> Result<RunRecord, crate::Error> {
        if !self.scan()? {
            let (work_list, settings) = self.identity(observer)?;
            return Ok(RunRecord::new(&work_list, slice, settings));
        }
        let kernels = &self.options.kernels;
        let Some(windowed) = self.windowed.as_mut() else {
            unreachable!("scanned above");
        };
        if slice != Shard::WHOLE {
            return Err(crate::Error::from(replay_core::Error::BadInput {
                path: kernels.clone(),
                message: format!(
                    "--shard: {} signatures are replayed in windows of {}, which --shard cannot split yet; run the file whole (--resume continues a run that was stopped), or split it into files of at most {} signatures",
                    windowed.scan.signatures,
                    windowed.scan.window,
                    windowed.scan.window
                ),
            }));
        }
        observer.info(&format!(
            "==> isolated: {} holds {} signatures: read streaming, in windows of {}\n",
            kernels.display(),
            windowed.scan.signatures,
            windowed.scan.window
        ));
        let (units, hash) = isolated_windowed::work_list_hash(kernels, windowed)?;
        windowed.units = Some(units);
        Ok(RunRecord::of_hash(
            replay_core::shard::isolated::COMMAND,
            units,
            hash,
            slice,
            self.settings(),
        ))
    }

    fn run(
        &mut self,
        shard: Shard,
        start: &mut RunStart,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error> {
        self.options.shard = shard;
        if self.scan()? {
            return self.run_windowed(start.resumed, observer);
        }
        self.file(observer)?;
        let (options, Some(file)) = (&self.options, &self.file) else {
            unreachable!("read above");
        };
        let device = Device::open(options.device)?.with_blocking_kernel(options.blocking_kernel);
        let mut probe = options.energy.open()?;
        let mut journal = IsolatedJournal::open(&options.output_dir, start.resumed)?;
        journal.watchdog = self.op_timeout.map(|timeout| {
            crate::replay::op_watchdog::OpWatchdog::start(timeout, journal.path().to_path_buf())
        });
        if start.resumed {
            observer.info(&format!(
                "==> isolated: {} unit rounds already in {}, running the rest\n",
                journal.found(),
                journal.path().display()
            ));
        }
        let results = replay(
            options,
            file,
            &device,
            probe.as_deref_mut(),
            observer,
            |_, _| ControlFlow::Continue(()),
            Some(&mut journal),
        )?;
        if let Some(e) = journal.error.take() {
            return Err(crate::Error::from(e));
        }
        if !results.complete {
            if let Some(signal) = replay_core::shard::stop::requested() {
                let units = isolated::work_list(file).covered(shard).len();
                let done = results
                    .results
                    .iter()
                    .map(|r| &r.replayed_as)
                    .collect::<std::collections::HashSet<_>>()
                    .len();
                return Err(crate::Error::from(replay_core::Error::Shard(
                    replay_core::shard::stop::stopped(
                        signal,
                        done,
                        units,
                        "replay units (in the first round)",
                    ),
                )));
            }
        }
        observer.result(&summary(file, &results, options));
        self.done = Some(results);
        Ok(())
    }

    fn shard_record(&self) -> Result<Option<ShardRecord>, crate::Error> {
        let (Some(file), Some(results)) = (&self.file, &self.done) else {
            return Ok(None);
        };
        if !results.complete {
            return Ok(None);
        }
        Ok(Some(ShardRecord {
            device: results.device.clone(),
            work_list: isolated::work_list(file),
            settings: self.settings(),
            files: vec![
                OutputFile::IsolatedJson.name().into(),
                OutputFile::IsolatedCsv.name().into(),
            ],
        }))
    }
}

impl IsolatedCommand {
    /// [`SuiteCommand::run`] on a file replayed in windows.
    fn run_windowed(
        &mut self,
        resumed: bool,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error> {
        let Some(windowed) = self.windowed.as_deref() else {
            unreachable!("scanned");
        };
        let options = &self.options;
        let outcome = isolated_windowed::run(
            options,
            windowed,
            resumed,
            self.op_timeout,
            run_config(options),
            observer,
            &mut |file, device, probe, observer, journal| {
                replay(
                    options,
                    file,
                    device,
                    probe,
                    observer,
                    |_, _| ControlFlow::Continue(()),
                    Some(journal),
                )
            },
        )?;
        if !outcome.complete {
            if let Some(signal) = replay_core::shard::stop::requested() {
                return Err(crate::Error::from(replay_core::Error::Shard(
                    replay_core::shard::stop::stopped(
                        signal,
                        outcome.rows,
                        windowed.scan.signatures,
                        "signatures (in whole windows)",
                    ),
                )));
            }
        }
        observer.result(&outcome.summary);
        Ok(())
    }
}

/// Replays `file` on `device`, writing results as they come; also used by `replay compare`,
/// which times the full model in `after_round` (see [`isolated::run`]), handing it the
/// observer for its own stages.
pub fn replay(
    options: &IsolatedOptions,
    file: &signature::schema::SignatureFile,
    device: &Device,
    probe: Option<&mut (dyn crate::energy::EnergyProbe + 'static)>,
    observer: &mut dyn Observer,
    mut after_round: impl FnMut(u32, &mut dyn Observer) -> ControlFlow<()>,
    journal: Option<&mut IsolatedJournal>,
) -> crate::Result<IsolatedResults> {
    let budget =
        crate::measure::Timing::budget(options.max_time_per_kernel_s).map_err(|message| {
            crate::Error::from(replay_core::Error::BadInput {
                path: "--max-time".into(),
                message,
            })
        })?;
    // A bad profile is refused before anything is replayed.
    let profile = match &options.profile {
        Some(path) => Some(
            replay_core::results::calibration::Profile::read(path).map_err(crate::Error::from)?,
        ),
        None => None,
    };
    super::threads::apply(options.threads)?;
    // Each round gets its share of the budget and of the minimum sample count.
    let config = crate::measure::Timing {
        min_samples: options.min_samples,
        noise: options.noise,
        rounds: Some(options.rounds),
        cold: options.cold,
        ..crate::measure::Timing::alone(budget)
    }
    .config();
    let run_config = run_config(options);
    let cold_flush: Option<ColdFlush> = match (options.cold, device) {
        (false, _) => None,
        (true, Device::Cpu(info)) => {
            let mut flusher = CpuCacheFlusher::new(info.last_level_cache_bytes());
            Some(Box::new(move || {
                flusher.flush();
                Ok(())
            }))
        }
        (true, Device::Cuda(dev)) => {
            let cache = KernelCache::default();
            let mut flusher = CudaL2Flusher::new(dev, &cache)?;
            Some(Box::new(move || flusher.flush().map_err(|e| e.to_string())))
        }
    };

    let generated = generated_kernels(file, &options.kernels, options.inductor_cache.as_deref())?;
    let energy_config = options.energy.config();
    let files = OutputDir::new(&options.output_dir);
    let json_path = files.path(OutputFile::IsolatedJson);
    let csv_path = files.path(OutputFile::IsolatedCsv);
    let mut write_error: Option<crate::Error> = None;
    // A window of a windowed run leaves its rows to the caller (`isolated_windowed`).
    let write_files = !journal.as_ref().is_some_and(|j| j.windowed);
    // Progress and the rounds' own stages both report while the replay runs.
    let observer = RefCell::new(observer);
    let _no_grad = tch::no_grad_guard();
    let mut results = isolated::run(
        file,
        &options.kernels,
        device,
        &config,
        run_config,
        &MonotonicClock::new(),
        cold_flush,
        probe.map(|p| (p, &energy_config)),
        |p| {
            observer.borrow_mut().progress(Tick {
                step: p.step,
                steps: p.steps,
                round: p.round,
                rounds: p.rounds,
                name: p.name,
            })
        },
        |results| {
            if !write_files {
                return ControlFlow::Continue(());
            }
            // Rewritten after every signature: an interrupted run keeps what it measured.
            let written = export::write_atomic(&json_path, &export::json::to_bytes(results))
                .and_then(|_| {
                    export::write_atomic(&csv_path, &export::csv::isolated_to_bytes(results))
                });
            match written {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    write_error.get_or_insert(e.into());
                    ControlFlow::Break(())
                }
            }
        },
        |round| after_round(round, &mut **observer.borrow_mut()),
        options.shard,
        generated.as_ref(),
        journal,
    );
    observer.into_inner().stage_finished(Stage::Isolated);
    if let Some(e) = write_error {
        return Err(e).context("writing isolated results");
    }
    if let (Some(profile), Some(path)) = (&profile, &options.profile) {
        replay_core::predict::roofline::apply_to_results(
            &mut results,
            file,
            profile,
            &path.display().to_string(),
        );
        if !write_files {
            return Ok(results);
        }
        export::write_atomic(&json_path, &export::json::to_bytes(&results))
            .and_then(|_| {
                export::write_atomic(&csv_path, &export::csv::isolated_to_bytes(&results))
            })
            .context("writing isolated results")?;
    }
    Ok(results)
}

/// The run's settings as its results record them.
pub(crate) fn run_config(options: &IsolatedOptions) -> RunConfig {
    RunConfig {
        cold: options.cold,
        max_time_per_kernel_s: options.max_time_per_kernel_s,
        noise_target: options.noise,
        min_samples: options.min_samples,
        rounds: options.rounds,
    }
}

/// What `replay isolated` reports: the statuses, coverage, the sum of the parts, energy, the
/// first failures and where the files are.
pub fn summary(
    file: &signature::SignatureFile,
    results: &IsolatedResults,
    options: &IsolatedOptions,
) -> String {
    let mut tally = super::isolated_summary::Tally::default();
    results.results.iter().for_each(|r| tally.add(r));
    tally.text(
        &results.device,
        &replay_core::report::unseen_in_file(file),
        &options.output_dir,
    )
}

/// The kept Inductor cache of a signature file with generated kernels (tier 4): `--inductor-cache
/// DIR`, else `inductor/` beside the trace the file was classified from, else beside the file
/// itself (where `compare` keeps both). None when the file has no generated kernel, or no cache
/// is found (its kernels then end unsupported, saying how to give one); a cache that is there
/// but malformed exits 2 naming it.
pub(crate) fn generated_kernels(
    file: &signature::schema::SignatureFile,
    signatures_path: &std::path::Path,
    cache: Option<&std::path::Path>,
) -> Result<Option<replay_core::inductor::InductorKernels>, crate::Error> {
    use replay_core::inductor::{locate, read_kernels};
    use replay_core::signature::schema::Tier;
    if !file.signatures.iter().any(|s| s.tier == Tier::Generated) {
        return Ok(None);
    }
    let bad = |e| crate::Error::from(replay_core::Error::from(e));
    let found = match cache {
        Some(_) => locate(signatures_path, cache).map_err(bad)?,
        None => [std::path::Path::new(&file.source.path), signatures_path]
            .into_iter()
            .find_map(|p| locate(p, None).ok().flatten()),
    };
    found
        .map(|path| read_kernels(&path).map_err(bad))
        .transpose()
}
