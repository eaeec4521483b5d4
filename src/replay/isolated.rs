//! `replay isolated`: every replay unit of a signature file set up, measured and reported,
//! one at a time. A failure in one unit never ends the run; the caller gets every result as
//! soon as it exists so it can write results as it goes.

use std::ops::ControlFlow;
use std::path::Path;
use std::time::Duration;

use crate::device::Device;
use crate::energy::{measure_energy, EnergyConfig, EnergyProbe, EnergySummary};
use crate::measure::interleave::{round_budget, round_order};
use crate::measure::{
    measure_detailed, Clock, MeasureConfig, MeasureError, Measurement, Placement, Target,
    TimedTarget, Timer,
};
use crate::signature::schema::{Signature, SignatureFile};
// The result types are the torch-free core's, so that reports read them without libtorch.
pub use crate::results::isolated::{
    IsolatedResults, RunConfig, SignatureResult, Status, ISOLATED_SCHEMA_VERSION,
};

use super::isolated_journal::{IsolatedJournal, UnitRound};
use super::parameter_copies::CopyBudget;
use super::registry::{replay_units, target_for, ReplayUnit, SetupError};
use replay_core::inductor::InductorKernels;
use replay_core::shard::{Shard, WorkList};

/// The work list a sharded `replay isolated` splits: the file's replay units in order,
/// each named by its lead signature's id (which every result of the unit records as
/// `replayed_as`).
pub fn work_list(file: &SignatureFile) -> WorkList {
    WorkList::new(
        replay_core::shard::isolated::COMMAND,
        replay_units(file)
            .iter()
            .map(|u| file.signatures[u.lead].id.clone())
            .collect(),
    )
}

/// Progress of a run, for bars and logs: `step` of `steps` counts every unit in every round.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub step: usize,
    pub steps: usize,
    pub round: u32,
    pub rounds: u32,
    pub name: &'a str,
}

/// Something that prepares the device before each sample when `--cold` is given.
pub type ColdFlush = Box<dyn FnMut() -> Result<(), String>>;

/// Where one replay unit stands after the rounds so far.
struct UnitOutcome {
    result: Result<(Measurement, String), SetupError>,
    energy: Option<Result<EnergySummary, String>>,
}

/// Runs every replay unit of `file` on `device`, in `run_config.rounds` interleaved rounds
/// (each unit measured once per round with `round_config`, in a shuffled order after the
/// first round; its samples pooled over the rounds). Energy is measured in the last round.
///
/// `on_progress` is called before each unit of each round; `on_results` after each, with all
/// results so far (from the second round on, every signature has a result that later rounds
/// refine), and a `Break` from it (results that cannot be written) ends the run; `after_round` after each round: `replay compare` times a share of the full
/// model's runs there, and a `Break` ends the run early (the results say `complete: false`).
#[allow(clippy::too_many_arguments)]
pub fn run(
    file: &SignatureFile,
    signatures_path: &Path,
    device: &Device,
    round_config: &MeasureConfig,
    run_config: RunConfig,
    clock: &dyn Clock,
    mut cold_flush: Option<ColdFlush>,
    mut energy: Option<(&mut (dyn EnergyProbe + 'static), &EnergyConfig)>,
    mut on_progress: impl FnMut(Progress<'_>),
    mut on_results: impl FnMut(&IsolatedResults) -> ControlFlow<()>,
    mut after_round: impl FnMut(u32) -> ControlFlow<()>,
    shard: Shard,
    generated: Option<&InductorKernels>,
    mut journal: Option<&mut IsolatedJournal>,
) -> IsolatedResults {
    // `--shard I/N`: this process's units only; `results` then holds theirs (in the
    // file's unit order) and `replay merge` puts the shards' back together.
    let units = shard.slice(&replay_units(file));
    let sigs = &file.signatures;
    let rounds = run_config.rounds.max(1);
    // A unit's parameter copies: never more than one round's measurement can read.
    let copies = CopyBudget::for_round(round_budget(
        Duration::from_secs_f64(run_config.max_time_per_kernel_s.max(0.0)),
        rounds,
    ));
    let mut results = IsolatedResults {
        schema_version: ISOLATED_SCHEMA_VERSION,
        tool: format!("replay {}", env!("CARGO_PKG_VERSION")),
        device: device.describe(),
        signatures_file: signatures_path.display().to_string(),
        config: run_config,
        signatures_total: sigs.len(),
        complete: false,
        results: Vec::with_capacity(sigs.len()),
    };
    let mut outcomes: Vec<Option<UnitOutcome>> = (0..units.len()).map(|_| None).collect();
    for round in 0..rounds {
        let last_round = round + 1 == rounds;
        for (position, unit_index) in round_order(units.len(), round).into_iter().enumerate() {
            let unit = &units[unit_index];
            // A unit that failed once is not tried again: its error stands.
            if matches!(&outcomes[unit_index], Some(o) if o.result.is_err()) {
                continue;
            }
            let unit_id = &sigs[unit.lead].id;
            // Resuming: a (round, unit) the killed run journaled is taken back, not re-run.
            let journaled = journal.as_deref_mut().and_then(|j| j.take(round, unit_id));
            let resumed = journaled.is_some();
            let (measured, energy_result) = match journaled {
                Some(kept) => kept,
                None => {
                    // Between units: a SIGINT/SIGTERM, or a journal the disk refused, ends
                    // the run here (`complete: false`), every file whole.
                    if replay_core::shard::stop::requested().is_some()
                        || journal.as_ref().is_some_and(|j| j.error.is_some())
                    {
                        results.results = all_results(sigs, &units, &outcomes);
                        return results;
                    }
                    on_progress(Progress {
                        step: round as usize * units.len() + position,
                        steps: rounds as usize * units.len(),
                        round,
                        rounds,
                        name: &sigs[unit.lead].name,
                    });
                    let watchdog = journal.as_ref().and_then(|j| j.watchdog.clone());
                    if let Some(dog) = &watchdog {
                        dog.arm(round, unit_id);
                    }
                    let kept = measure_unit(
                        file,
                        unit,
                        device,
                        generated,
                        copies,
                        round_config,
                        clock,
                        cold_flush.as_mut(),
                        if last_round { energy.as_mut() } else { None },
                    );
                    if let Some(dog) = &watchdog {
                        dog.disarm();
                    }
                    // The next unit starts from the same resident floor, whatever this one
                    // left free in the heap.
                    super::host_heap::release_free();
                    // What the unit's pool keeps of this round is what the journal keeps.
                    let (result, energy_result) = kept;
                    let pool = outcomes[unit_index].as_ref();
                    let result = result.and_then(|(round_measurement, method)| {
                        Ok((pool_share(pool, round_measurement)?, method))
                    });
                    let kept = (result, energy_result);
                    if let Some(j) = journal.as_deref_mut() {
                        j.record(round, unit_id, &kept);
                    }
                    kept
                }
            };
            let previous = outcomes[unit_index].take();
            let result = match (previous.map(|p| p.result), measured) {
                (Some(Ok((mut pooled, method))), Ok((round_measurement, _))) => pooled
                    .add_round(round_measurement)
                    .map(|()| (pooled, method))
                    .map_err(SetupError::from),
                (_, measured) => measured,
            };
            outcomes[unit_index] = Some(UnitOutcome {
                result,
                energy: energy_result,
            });
            // A windowed run writes its rows once a window is done: rebuilding them after
            // every unit would make a window quadratic.
            if !rows_each_unit(&journal) {
                continue;
            }
            results.results = all_results(sigs, &units, &outcomes);
            // A result file that cannot be written (a full disk) ends the run here.
            if !resumed && on_results(&results).is_break() {
                return results;
            }
        }
        if after_round(round).is_break() {
            results.results = all_results(sigs, &units, &outcomes);
            return results;
        }
    }
    results.results = all_results(sigs, &units, &outcomes);
    results.complete = true;
    let _ = on_results(&results);
    results
}

/// Whether results are rebuilt and handed over after every unit (every run but a window of
/// a windowed one).
fn rows_each_unit(journal: &Option<&mut IsolatedJournal>) -> bool {
    !journal.as_ref().is_some_and(|j| j.windowed)
}

/// The results of every unit that has an outcome, in unit order.
fn all_results(
    sigs: &[Signature],
    units: &[ReplayUnit],
    outcomes: &[Option<UnitOutcome>],
) -> Vec<SignatureResult> {
    units
        .iter()
        .zip(outcomes)
        .filter_map(|(unit, outcome)| outcome.as_ref().map(|o| unit_results(sigs, unit, o)))
        .flatten()
        .collect()
}

/// One round of one unit: set up, measured, and in the last round (`energy` given) its
/// energy.
/// What a unit's pool keeps of a round just measured: its share of the pool, or, for the
/// first round (which becomes the pool), the round bounded to the pool's size.
fn pool_share(
    pool: Option<&UnitOutcome>,
    mut round: Measurement,
) -> Result<Measurement, SetupError> {
    match pool.map(|o| &o.result) {
        Some(Ok((pool, _))) => Ok(pool.share_for(round)?),
        _ => {
            round.bound_pool();
            Ok(round)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn measure_unit(
    file: &SignatureFile,
    unit: &ReplayUnit,
    device: &Device,
    generated: Option<&InductorKernels>,
    copies: CopyBudget,
    round_config: &MeasureConfig,
    clock: &dyn Clock,
    cold_flush: Option<&mut ColdFlush>,
    energy: Option<&mut (&mut (dyn EnergyProbe + 'static), &EnergyConfig)>,
) -> UnitRound {
    let mut energy_result: Option<Result<EnergySummary, String>> = None;
    let measured: Result<(Measurement, String), SetupError> =
        target_for(file, unit, device, generated, copies).and_then(|(mut target, method)| {
            let mut flushing;
            let target: &mut dyn Target = match cold_flush {
                Some(flush) => {
                    flushing = ColdTarget {
                        inner: target.as_mut(),
                        flush,
                    };
                    &mut flushing
                }
                None => target.as_mut(),
            };
            let measurement = measure_detailed(target, round_config, clock)?;
            // Energy after time: the probe's windows repeat the same batches, long
            // enough to cover its update period (`energy::measure_energy`).
            if let Some((probe, energy_config)) = energy {
                let calls = measurement.summary.calls_per_sample.max(1);
                energy_result = Some(match TimedTarget::new(target) {
                    Ok(mut timed) => measure_energy(&mut **probe, calls, energy_config, || {
                        timed.batch(calls).map(|_| ())
                    })
                    .map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                });
            }
            Ok((measurement, method.0))
        });
    (measured, energy_result)
}

/// The results of every signature a unit stands for.
fn unit_results(
    sigs: &[Signature],
    unit: &ReplayUnit,
    outcome: &UnitOutcome,
) -> Vec<SignatureResult> {
    let lead = &sigs[unit.lead];
    let base = |i: usize, share: f64| {
        let s = &sigs[i];
        SignatureResult {
            id: s.id.clone(),
            tier: s.tier,
            name: s.name.clone(),
            op: s.op.as_ref().map(|o| o.name.clone()),
            count: s.count,
            trace_mean_us: s.trace_mean_us,
            trace_total_us: s.trace_total_us,
            status: Status::Ok,
            method: None,
            reason: None,
            replayed_as: lead.id.clone(),
            share,
            predicted_us: None,
            host_us: None,
            stats: None,
            joules_per_invocation: None,
            energy: None,
            roofline: None,
        }
    };
    let mut out = Vec::with_capacity(unit.members.len() + unit.included.len());
    for &(i, share) in &unit.members {
        let mut r = base(i, share);
        match &outcome.result {
            Ok((measurement, method)) => {
                let summary = &measurement.summary;
                r.method = Some(method.clone());
                r.predicted_us = Some(summary.median * share);
                r.host_us = Some(summary.host_median * share);
                r.stats = Some(summary.clone());
                if let Some(e) = &outcome.energy {
                    r.joules_per_invocation = e
                        .as_ref()
                        .ok()
                        .map(|e| e.joules_per_invocation.median * share);
                    r.energy = Some(e.clone());
                }
            }
            Err(SetupError::Unsupported(m)) => {
                (r.status, r.reason) = (Status::Unsupported, Some(m.clone()))
            }
            Err(SetupError::Failed(m)) => (r.status, r.reason) = (Status::Failed, Some(m.clone())),
            Err(SetupError::Oom(m)) => (r.status, r.reason) = (Status::Oom, Some(m.clone())),
        }
        out.push(r);
    }
    for &i in &unit.included {
        let mut r = base(i, 0.0);
        match &outcome.result {
            Ok(_) => {
                r.status = Status::Included;
                r.reason = Some(format!("runs inside the replay of {}", lead.id));
                r.predicted_us = Some(0.0);
                r.host_us = Some(0.0);
            }
            Err(_) => {
                r.status = Status::Unsupported;
                r.reason = Some(format!("runs inside {}, which did not replay", lead.id));
            }
        }
        out.push(r);
    }
    out
}

/// Wraps a target so every sample starts from cold caches; it runs and is placed as the
/// target it wraps.
struct ColdTarget<'a> {
    inner: &'a mut dyn Target,
    flush: &'a mut ColdFlush,
}

impl Target for ColdTarget<'_> {
    fn placement(&self) -> Placement<'_> {
        self.inner.placement()
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        self.inner.run(calls)
    }

    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        self.inner.run_timed(calls, timer)
    }

    fn prepare_sample(&mut self) -> Result<(), MeasureError> {
        self.inner.prepare_sample()?;
        (self.flush)().map_err(MeasureError::target)
    }
}
