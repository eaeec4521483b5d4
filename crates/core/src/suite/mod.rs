//! The interface every benchmark suite implements (scan, calibrate, quant, mhc), and the one
//! runner that drives them: it enumerates the suite's cases in a fixed order, checks each
//! against the suite's reference, times it through the measurement core, and hands each
//! row to a sink as soon as it exists. A case that fails (out of memory, an error, a recipe
//! not implemented) becomes a row with that status; it never ends the run.
//!
//! A suite names its device type, so the same interface serves suites on replay's CPU and
//! CUDA devices (the libtorch side) and trace-only suites here. Suites import `measure`,
//! `export` and `report`, never each other or a command line.

use std::time::Duration;

use serde::Serialize;

use crate::export::rows::Row;
use crate::measure::{measure_detailed, Clock, MeasureConfig, Measurement, Target};
use crate::shard::{Shard, WorkList};

/// How one case of a grid ended, as the suites' CSV files spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    Ok,
    Oom,
    Error,
    NotImplemented,
    Skipped,
}

impl CaseStatus {
    /// Every status, in the order the suites' files list them.
    pub const ALL: [CaseStatus; 5] = [
        CaseStatus::Ok,
        CaseStatus::Oom,
        CaseStatus::Error,
        CaseStatus::NotImplemented,
        CaseStatus::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Ok => "ok",
            CaseStatus::Oom => "oom",
            CaseStatus::Error => "error",
            CaseStatus::NotImplemented => "not_implemented",
            CaseStatus::Skipped => "skipped",
        }
    }
}

/// Why a case has no measurement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CaseError {
    pub status: CaseStatus,
    pub message: String,
}

impl CaseError {
    pub fn new(status: CaseStatus, message: impl Into<String>) -> CaseError {
        CaseError {
            status,
            message: message.into(),
        }
    }
}

/// What became of one case: the row the suite writes is made from this.
#[derive(Debug, Clone)]
pub enum CaseOutcome {
    /// The summary and the raw samples (for statistics the summary does not keep, such as
    /// a suite's own quartile rule).
    Measured(Box<Measurement>),
    Failed(CaseError),
}

impl CaseOutcome {
    pub fn status(&self) -> CaseStatus {
        match self {
            CaseOutcome::Measured(_) => CaseStatus::Ok,
            CaseOutcome::Failed(e) => e.status,
        }
    }
}

/// A benchmark suite.
pub trait Suite {
    /// One configuration of the grid (T, K, C, backend, ... for the scan).
    type Case: Clone + std::fmt::Debug;
    /// What the cases run on.
    type Device: ?Sized;

    /// The columns of the suite's result rows, in order.
    fn columns(&self) -> Vec<&'static str>;

    /// Every case, in the order they run (deterministic, so a grid can be split into shards).
    fn cases(&self) -> Vec<Self::Case>;

    /// The case's id in the work list a shard records ([`crate::shard`]): the same case
    /// must give the same id in every process. The default, its `Debug` text, is.
    fn case_id(&self, case: &Self::Case) -> String {
        format!("{case:?}")
    }

    /// Whether `case` belongs to the group of `previous`, the case just before it in
    /// [`Suite::cases`]. A group is what `--shard` deals out and what a stop waits to finish
    /// (an mhc configuration, whose stages share inputs made once); by default every case is
    /// a group of its own.
    fn same_group(&self, _previous: &Self::Case, _case: &Self::Case) -> bool {
        false
    }

    /// What the groups are called in messages (a stop's "after 3 of 8 cases").
    fn unit(&self) -> &'static str {
        "cases"
    }

    /// A reason to skip `case` given the cases already done (a memory estimate over the limit,
    /// or a smaller case that ran out of memory), or `None` to run it.
    fn skip(&self, _case: &Self::Case, _done: &[(Self::Case, CaseStatus)]) -> Option<String> {
        None
    }

    /// Checks the case's kernel against the suite's independent reference before it is timed;
    /// a wrong result is an `error` row, never a time.
    fn check(&self, _case: &Self::Case, _device: &Self::Device) -> Result<(), CaseError> {
        Ok(())
    }

    /// The work of `case`, ready to be timed. A suite that overrides
    /// [`Suite::measure_case`] instead need not provide it.
    fn target<'s>(
        &'s self,
        _case: &Self::Case,
        _device: &'s Self::Device,
    ) -> Result<Box<dyn Target + 's>, CaseError> {
        Err(CaseError::new(
            CaseStatus::Error,
            format!(
                "{} provides neither Suite::target nor Suite::measure_case",
                std::any::type_name::<Self>()
            ),
        ))
    }

    /// Checks `case` and hands its work to `time`, which measures it. The default is
    /// [`Suite::check`], then `time` on [`Suite::target`]. A suite whose work borrows inputs
    /// made for this case alone overrides this: such work cannot outlive the call that made
    /// its inputs, so it is built, checked and timed here, on this call's stack.
    fn measure_case(
        &self,
        case: &Self::Case,
        device: &Self::Device,
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        self.check(case, device)?;
        let mut target = self.target(case, device)?;
        time(target.as_mut())
    }

    /// The result row of `case`.
    fn row(&self, case: &Self::Case, outcome: &CaseOutcome) -> Row;

    /// Runs `case` (the skip rule let it through) and makes its row, with the status the
    /// tally counts. The default measures it ([`Suite::measure_case`], timed by `time`) and
    /// makes the row with [`Suite::row`]. A suite whose case is not one timed piece of work
    /// (several measurements, each with its own result) overrides this and makes the row
    /// itself.
    fn run_case(
        &self,
        case: &Self::Case,
        device: &Self::Device,
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> (CaseStatus, Row) {
        let outcome = match self.measure_case(case, device, time) {
            Ok(measured) => CaseOutcome::Measured(Box::new(measured)),
            Err(e) => CaseOutcome::Failed(e),
        };
        (outcome.status(), self.row(case, &outcome))
    }

    /// The status of a row this suite wrote (read back by `--resume`, for the skip rule):
    /// its `status` column in the core's words; a suite with words of its own overrides it.
    fn row_status(&self, row: &Row) -> CaseStatus {
        let word = row.get("status").and_then(|v| v.as_str()).unwrap_or("ok");
        CaseStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == word)
            .unwrap_or(CaseStatus::Ok)
    }
}

/// Where a suite's rows go as they are made (a CSV file, a test's vector).
pub trait RowSink {
    fn push(&mut self, row: &Row) -> crate::Result<()>;
}

impl RowSink for crate::export::rows::CsvRows {
    fn push(&mut self, row: &Row) -> crate::Result<()> {
        self.append(row)
    }
}

impl RowSink for Vec<Row> {
    fn push(&mut self, row: &Row) -> crate::Result<()> {
        Vec::push(self, row.clone());
        Ok(())
    }
}

/// One case as the runner reports it to an observer (a progress bar).
#[derive(Debug, Clone, Copy)]
pub struct CaseProgress<'c, C> {
    pub index: usize,
    pub total: usize,
    pub case: &'c C,
    pub status: CaseStatus,
    pub elapsed: Duration,
}

/// What a grid run tells whoever watches it, case by case and group by group
/// ([`Suite::same_group`]). A closure of [`CaseProgress`] hears the cases only ([`Cases`]).
pub trait GridEvents<C> {
    /// The group whose first case is `first` is about to run (the stop check has passed).
    fn group_started(&mut self, _first: &C) {}
    /// A case has its row, written.
    fn case_finished(&mut self, progress: CaseProgress<'_, C>);
    /// The group whose last case is `last` has every row written.
    fn group_finished(&mut self, _last: &C) {}
}

/// A closure as [`GridEvents`]: it hears every finished case.
pub struct Cases<F>(pub F);

impl<C, F: FnMut(CaseProgress<'_, C>)> GridEvents<C> for Cases<F> {
    fn case_finished(&mut self, progress: CaseProgress<'_, C>) {
        (self.0)(progress)
    }
}

/// What a run did, by status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunTally {
    pub ok: usize,
    pub oom: usize,
    pub error: usize,
    pub not_implemented: usize,
    pub skipped: usize,
}

impl RunTally {
    fn count(&mut self, status: CaseStatus) {
        *match status {
            CaseStatus::Ok => &mut self.ok,
            CaseStatus::Oom => &mut self.oom,
            CaseStatus::Error => &mut self.error,
            CaseStatus::NotImplemented => &mut self.not_implemented,
            CaseStatus::Skipped => &mut self.skipped,
        } += 1;
    }
}

/// The suite's work list under `command` (the name its shards and `replay merge` use):
/// every case's id, in order.
pub fn work_list<S: Suite>(suite: &S, command: &str) -> WorkList {
    WorkList::new(
        command,
        suite.cases().iter().map(|c| suite.case_id(c)).collect(),
    )
}

/// Runs every case of `suite` on `device`: skip rule, reference check, timing, one row each,
/// pushed to `sink` at once. Only a sink that cannot be written ends the run (the rows so far
/// stay where they were written).
pub fn run<S: Suite>(
    suite: &S,
    device: &S::Device,
    config: &MeasureConfig,
    clock: &dyn Clock,
    sink: &mut dyn RowSink,
    observe: impl FnMut(CaseProgress<'_, S::Case>),
) -> crate::Result<RunTally> {
    run_shard(suite, Shard::WHOLE, device, config, clock, sink, observe)
}

/// [`run`] on `shard`'s slice of the cases only (`--shard I/N`): the same rows a whole run
/// writes for those cases, in the same order. The skip rule sees the cases of this shard
/// only (a larger case another shard ran out of memory on is tried here).
pub fn run_shard<S: Suite>(
    suite: &S,
    shard: Shard,
    device: &S::Device,
    config: &MeasureConfig,
    clock: &dyn Clock,
    sink: &mut dyn RowSink,
    observe: impl FnMut(CaseProgress<'_, S::Case>),
) -> crate::Result<RunTally> {
    run_resumed(suite, shard, &[], device, config, clock, sink, observe)
}

/// [`run_shard`] resuming a run whose first `resumed.len()` cases already have their rows
/// (`--resume`): those are counted and seen by the skip rule, not run or written again.
/// Between cases (groups, [`Suite::same_group`]), a SIGINT or SIGTERM ([`crate::shard::stop`]) ends the run with
/// [`crate::shard::ShardError::Stopped`], every row so far written whole.
#[allow(clippy::too_many_arguments)]
pub fn run_resumed<S: Suite>(
    suite: &S,
    shard: Shard,
    resumed: &[Row],
    device: &S::Device,
    config: &MeasureConfig,
    clock: &dyn Clock,
    sink: &mut dyn RowSink,
    observe: impl FnMut(CaseProgress<'_, S::Case>),
) -> crate::Result<RunTally> {
    run_grid(
        suite,
        shard,
        resumed,
        device,
        config,
        clock,
        sink,
        &mut Cases(observe),
    )
}

/// The cases of `shard`, in order: whole groups ([`Suite::same_group`]) dealt out as the
/// items of a work list are (one case per group by default: [`Shard::slice`] of the cases).
pub fn shard_cases<S: Suite>(suite: &S, shard: Shard) -> Vec<S::Case> {
    let mut group = 0;
    let mut previous: Option<&S::Case> = None;
    let all = suite.cases();
    let mut mine = Vec::new();
    for case in &all {
        if previous.is_some_and(|p| !suite.same_group(p, case)) {
            group += 1;
        }
        previous = Some(case);
        if shard.owns(group) {
            mine.push(case.clone());
        }
    }
    mine
}

/// [`run_resumed`] telling `events` of groups as well as cases. `resumed` holds whole
/// groups' rows; a stop ([`crate::shard::stop`]) waits for the group under way to finish.
#[allow(clippy::too_many_arguments)]
pub fn run_grid<S: Suite>(
    suite: &S,
    shard: Shard,
    resumed: &[Row],
    device: &S::Device,
    config: &MeasureConfig,
    clock: &dyn Clock,
    sink: &mut dyn RowSink,
    events: &mut dyn GridEvents<S::Case>,
) -> crate::Result<RunTally> {
    let cases = shard_cases(suite, shard);
    // starts[i]: case i begins a group.
    let starts: Vec<bool> = (0..cases.len())
        .map(|i| i == 0 || !suite.same_group(&cases[i - 1], &cases[i]))
        .collect();
    let groups = starts.iter().filter(|s| **s).count();
    let mut done: Vec<(S::Case, CaseStatus)> = Vec::with_capacity(cases.len());
    let mut tally = RunTally::default();
    if resumed.len() > cases.len() {
        return Err(crate::Error::Shard(crate::shard::ShardError::Resume(
            format!(
                "--resume: the rows file holds {} rows, but the run has {} cases",
                resumed.len(),
                cases.len()
            ),
        )));
    }
    for (case, row) in cases.iter().zip(resumed) {
        let status = suite.row_status(row);
        tally.count(status);
        done.push((case.clone(), status));
    }
    for (index, case) in cases.iter().enumerate().skip(resumed.len()) {
        if starts[index] || index == resumed.len() {
            // The groups before this case, all done.
            let before = starts[1..=index].iter().filter(|s| **s).count();
            crate::shard::stop::check(before, groups, suite.unit())?;
            events.group_started(case);
        }
        let started = std::time::Instant::now();
        let (status, row) = match suite.skip(case, &done) {
            Some(reason) => {
                let skipped = CaseOutcome::Failed(CaseError::new(CaseStatus::Skipped, reason));
                (skipped.status(), suite.row(case, &skipped))
            }
            None => suite.run_case(case, device, &mut |target| {
                measure_detailed(target, config, clock)
                    .map_err(|e| CaseError::new(CaseStatus::Error, e.to_string()))
            }),
        };
        sink.push(&row)?;
        tally.count(status);
        done.push((case.clone(), status));
        events.case_finished(CaseProgress {
            index,
            total: cases.len(),
            case,
            status,
            elapsed: started.elapsed(),
        });
        if starts.get(index + 1).is_none_or(|next| *next) {
            events.group_finished(case);
        }
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{MeasureError, Placement, SyntheticClock, SyntheticStream};

    /// A suite of "sums of n numbers" whose target takes a fixed time per call on a synthetic
    /// stream (the runner's clock), with one case out of memory, one failing its check and one
    /// too big.
    struct SumSuite;

    struct FixedTarget {
        per_call: Duration,
        stream: SyntheticStream,
    }

    impl Target for FixedTarget {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.stream)
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            self.stream.device().advance(self.per_call * calls as u32);
            Ok(())
        }
    }

    impl Suite for SumSuite {
        type Case = u64;
        type Device = SyntheticClock;

        fn columns(&self) -> Vec<&'static str> {
            vec!["n", "time_us_median", "status", "error_msg"]
        }
        fn cases(&self) -> Vec<u64> {
            vec![10, 20, 30, 40, 50]
        }
        fn skip(&self, case: &u64, done: &[(u64, CaseStatus)]) -> Option<String> {
            // The seed's rule: after an out-of-memory case, every larger one is skipped.
            done.iter()
                .find(|(n, s)| *s == CaseStatus::Oom && case > n)
                .map(|(n, _)| format!("n={n} ran out of memory"))
        }
        fn check(&self, case: &u64, _: &SyntheticClock) -> Result<(), CaseError> {
            let sum: u64 = (1..=*case).sum();
            if *case == 20 {
                // A kernel that returned the wrong sum.
                return Err(CaseError::new(
                    CaseStatus::Error,
                    format!("sum {} != reference {sum}", sum + 1),
                ));
            }
            Ok(())
        }
        fn target<'s>(
            &'s self,
            case: &u64,
            clock: &'s SyntheticClock,
        ) -> Result<Box<dyn Target + 's>, CaseError> {
            if *case == 40 {
                return Err(CaseError::new(CaseStatus::Oom, "out of memory"));
            }
            Ok(Box::new(FixedTarget {
                per_call: Duration::from_micros(*case),
                stream: SyntheticStream::on(clock),
            }))
        }
        fn row(&self, case: &u64, outcome: &CaseOutcome) -> Row {
            let row = Row::new().with("n", *case);
            match outcome {
                CaseOutcome::Measured(m) => row
                    .with("time_us_median", m.summary.median)
                    .with("status", "ok"),
                CaseOutcome::Failed(e) => row
                    .with("status", e.status.as_str())
                    .with("error_msg", e.message.clone()),
            }
        }
    }

    #[test]
    fn every_case_gets_a_row_in_order_and_failures_never_end_the_run() {
        let clock = SyntheticClock::new();
        let mut rows: Vec<Row> = Vec::new();
        let mut seen = Vec::new();
        let tally = run(
            &SumSuite,
            &clock,
            &MeasureConfig::with_time_budget(Duration::from_millis(50)),
            &clock,
            &mut rows,
            |p| seen.push((p.index, p.total, *p.case, p.status)),
        )
        .unwrap();
        let statuses: Vec<_> = rows
            .iter()
            .map(|r| (r.get("n").cloned(), r.get("status").cloned()))
            .collect();
        use serde_json::json;
        assert_eq!(
            statuses,
            [
                (Some(json!(10)), Some(json!("ok"))),
                (Some(json!(20)), Some(json!("error"))),
                (Some(json!(30)), Some(json!("ok"))),
                (Some(json!(40)), Some(json!("oom"))),
                (Some(json!(50)), Some(json!("skipped"))),
            ]
        );
        // The times are the target's own: 10 and 30 us per call.
        assert_eq!(rows[0].get("time_us_median"), Some(&json!(10.0)));
        assert_eq!(rows[2].get("time_us_median"), Some(&json!(30.0)));
        assert!(rows[1]
            .get("error_msg")
            .unwrap()
            .as_str()
            .unwrap()
            .contains("reference 210"));
        assert_eq!(
            rows[4].get("error_msg"),
            Some(&json!("n=40 ran out of memory"))
        );
        assert_eq!(
            tally,
            RunTally {
                ok: 2,
                oom: 1,
                error: 1,
                not_implemented: 0,
                skipped: 1
            }
        );
        assert_eq!(seen.len(), 5);
        assert!(seen.iter().enumerate().all(|(i, s)| s.0 == i && s.1 == 5));
    }

    #[test]
    fn the_shards_rows_put_back_in_work_list_order_are_the_whole_runs() {
        let clock = SyntheticClock::new();
        let config = MeasureConfig::with_time_budget(Duration::from_millis(5));
        let list = work_list(&BorrowingSuite, "sums");
        assert_eq!(list.ids, ["3", "4"]);
        let mut whole: Vec<Row> = Vec::new();
        run(&BorrowingSuite, &clock, &config, &clock, &mut whole, |_| {}).unwrap();
        let mut first: Vec<Row> = Vec::new();
        let mut second: Vec<Row> = Vec::new();
        let mut totals = Vec::new();
        for (i, sink) in [(1, &mut first), (2, &mut second)] {
            run_shard(
                &BorrowingSuite,
                Shard::new(i, 2).unwrap(),
                &clock,
                &config,
                &clock,
                sink,
                |p| totals.push(p.total),
            )
            .unwrap();
        }
        assert_eq!(totals, [1, 1]);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].get("n"), whole[0].get("n"));
        assert_eq!(second[0].get("n"), whole[1].get("n"));
    }

    /// A suite whose case is several results in one row (as a calibration item is): it
    /// overrides `run_case`, and the runner still owns the slice, the resumed rows and the
    /// tally.
    struct ManyResults;

    impl Suite for ManyResults {
        type Case = u64;
        type Device = ();

        fn columns(&self) -> Vec<&'static str> {
            vec!["item", "results"]
        }
        fn cases(&self) -> Vec<u64> {
            vec![1, 2, 3, 4]
        }
        fn unit(&self) -> &'static str {
            "items"
        }
        fn run_case(
            &self,
            case: &u64,
            _: &(),
            _: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
        ) -> (CaseStatus, Row) {
            // Item n gives n results; an even item had a failure.
            let results: Vec<u64> = (1..=*case).map(|k| k * 10).collect();
            let status = if case.is_multiple_of(2) {
                CaseStatus::Error
            } else {
                CaseStatus::Ok
            };
            (
                status,
                Row::new().with("item", *case).with("results", results),
            )
        }
        fn row(&self, case: &u64, outcome: &CaseOutcome) -> Row {
            Row::new()
                .with("item", *case)
                .with("status", outcome.status().as_str())
        }
    }

    #[test]
    fn a_suite_that_makes_its_own_rows_runs_under_the_runners_slice_and_resume() {
        use serde_json::json;
        let clock = SyntheticClock::new();
        let config = MeasureConfig::with_time_budget(Duration::from_millis(5));
        // Shard 2/2 of four items is items 2 and 4; item 2 resumed, so only item 4 runs.
        let resumed = [Row::new().with("item", 2).with("status", "error")];
        let mut rows: Vec<Row> = Vec::new();
        let mut seen = Vec::new();
        let tally = run_resumed(
            &ManyResults,
            Shard::new(2, 2).unwrap(),
            &resumed,
            &(),
            &config,
            &clock,
            &mut rows,
            |p| seen.push((p.index, p.total, *p.case, p.status)),
        )
        .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get("item"), Some(&json!(4)));
        assert_eq!(rows[0].get("results"), Some(&json!([10, 20, 30, 40])));
        assert_eq!(seen, [(1, 2, 4, CaseStatus::Error)]);
        assert_eq!(tally.error, 2, "the resumed row's status and the new one's");
        assert_eq!(tally.ok, 0);
        assert_eq!(ManyResults.unit(), "items");
        assert_eq!(SumSuite.unit(), "cases");
    }

    /// A suite whose target borrows inputs made for the case: it overrides `measure_case`
    /// and the runner times the borrowed work all the same.
    struct BorrowingSuite;

    struct SliceTarget<'a> {
        values: &'a [u64],
        stream: SyntheticStream,
    }

    impl Target for SliceTarget<'_> {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.stream)
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            let t = Duration::from_micros(self.values.iter().sum::<u64>()) * calls as u32;
            self.stream.device().advance(t);
            Ok(())
        }
    }

    impl Suite for BorrowingSuite {
        type Case = u64;
        type Device = SyntheticClock;

        fn columns(&self) -> Vec<&'static str> {
            vec!["n", "time_us_median"]
        }
        fn cases(&self) -> Vec<u64> {
            vec![3, 4]
        }
        fn measure_case(
            &self,
            case: &u64,
            clock: &SyntheticClock,
            time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
        ) -> Result<Measurement, CaseError> {
            let inputs: Vec<u64> = (1..=*case).collect();
            time(&mut SliceTarget {
                values: &inputs,
                stream: SyntheticStream::on(clock),
            })
        }
        fn row(&self, case: &u64, outcome: &CaseOutcome) -> Row {
            let row = Row::new().with("n", *case);
            match outcome {
                CaseOutcome::Measured(m) => row.with("time_us_median", m.summary.median),
                CaseOutcome::Failed(e) => row.with("error_msg", e.message.clone()),
            }
        }
    }

    /// Cases (group, n) in groups of one configuration each: group 0 has two cases, group 1
    /// two, group 2 one.
    struct GroupedSuite;

    impl Suite for GroupedSuite {
        type Case = (u64, u64);
        type Device = SyntheticClock;

        fn columns(&self) -> Vec<&'static str> {
            vec!["group", "n", "time_us_median"]
        }
        fn cases(&self) -> Vec<(u64, u64)> {
            vec![(0, 1), (0, 2), (1, 1), (1, 2), (2, 1)]
        }
        fn same_group(&self, previous: &(u64, u64), case: &(u64, u64)) -> bool {
            previous.0 == case.0
        }
        fn unit(&self) -> &'static str {
            "groups"
        }
        fn target<'s>(
            &'s self,
            case: &(u64, u64),
            clock: &'s SyntheticClock,
        ) -> Result<Box<dyn Target + 's>, CaseError> {
            Ok(Box::new(FixedTarget {
                per_call: Duration::from_micros(10 * case.0 + case.1),
                stream: SyntheticStream::on(clock),
            }))
        }
        fn row(&self, case: &(u64, u64), outcome: &CaseOutcome) -> Row {
            let row = Row::new().with("group", case.0).with("n", case.1);
            match outcome {
                CaseOutcome::Measured(m) => row.with("time_us_median", m.summary.median),
                CaseOutcome::Failed(_) => row,
            }
        }
    }

    /// Every event of a grid run, as text.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl GridEvents<(u64, u64)> for Log {
        fn group_started(&mut self, first: &(u64, u64)) {
            self.0.push(format!("start {first:?}"));
        }
        fn case_finished(&mut self, p: CaseProgress<'_, (u64, u64)>) {
            self.0
                .push(format!("case {}/{} {:?}", p.index, p.total, p.case));
        }
        fn group_finished(&mut self, last: &(u64, u64)) {
            self.0.push(format!("end {last:?}"));
        }
    }

    #[test]
    fn a_shard_takes_whole_groups_and_events_frame_each_group() {
        let clock = SyntheticClock::new();
        let config = MeasureConfig::with_time_budget(Duration::from_millis(5));
        let grid = |shard: Shard, resumed: &[Row]| {
            let mut rows: Vec<Row> = Vec::new();
            let mut log = Log::default();
            let tally = run_grid(
                &GroupedSuite,
                shard,
                resumed,
                &clock,
                &config,
                &clock,
                &mut rows,
                &mut log,
            )
            .unwrap();
            (rows, log.0, tally.ok)
        };
        let first = Shard::new(1, 2).unwrap();
        assert_eq!(shard_cases(&GroupedSuite, first), [(0, 1), (0, 2), (2, 1)]);
        assert_eq!(
            shard_cases(&GroupedSuite, Shard::new(2, 2).unwrap()),
            [(1, 1), (1, 2)]
        );
        let (rows, log, ok) = grid(first, &[]);
        assert_eq!(
            log,
            [
                "start (0, 1)",
                "case 0/3 (0, 1)",
                "case 1/3 (0, 2)",
                "end (0, 2)",
                "start (2, 1)",
                "case 2/3 (2, 1)",
                "end (2, 1)",
            ]
        );
        assert_eq!(ok, 3);
        use serde_json::json;
        assert_eq!(rows[2].get("time_us_median"), Some(&json!(21.0)));
        // Resumed after its first group: counted, not run again; the events start at the next.
        let (again, log, ok) = grid(first, &rows[..2]);
        assert_eq!(log, ["start (2, 1)", "case 2/3 (2, 1)", "end (2, 1)"]);
        assert_eq!(ok, 3);
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].get("group"), Some(&json!(2)));
    }

    #[test]
    fn by_default_every_case_is_its_own_group() {
        let every = Shard::new(2, 3).unwrap();
        assert_eq!(
            shard_cases(&SumSuite, every),
            every.slice(&SumSuite.cases())
        );
        assert_eq!(SumSuite.unit(), "cases");
    }

    #[test]
    fn a_suite_can_time_work_that_borrows_its_case_inputs() {
        let clock = SyntheticClock::new();
        let mut rows: Vec<Row> = Vec::new();
        let tally = run(
            &BorrowingSuite,
            &clock,
            &MeasureConfig::with_time_budget(Duration::from_millis(5)),
            &clock,
            &mut rows,
            |_| {},
        )
        .unwrap();
        use serde_json::json;
        // 1+2+3 = 6 us and 1+2+3+4 = 10 us per call, and both measured with samples.
        assert_eq!(rows[0].get("time_us_median"), Some(&json!(6.0)));
        assert_eq!(rows[1].get("time_us_median"), Some(&json!(10.0)));
        assert_eq!(tally.ok, 2);
    }
}
