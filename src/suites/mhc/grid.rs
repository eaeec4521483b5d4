//! `bench mhc`'s whole grid as one core [`Suite`], run by the core's grid runner: every
//! configuration (placement × batch size) × implementation × stage, in the order rows are
//! written. A configuration's cases are one group: `--shard` deals out configurations and a
//! stop waits for the one under way, since its stages share inputs of gigabytes made once.
//! Each configuration is run by its own [`MhcSuite`], made at its first case and dropped,
//! inputs and all, when the configuration ends ([`MhcGrid::finish_configuration`]).

use std::cell::RefCell;
use std::rc::Rc;

use replay_core::export::rows::Row;
use replay_core::measure::{MeasureConfig, Measurement, Target};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};

use super::bench::{case_order, MhcSettings, MhcSuite};
use super::rows::{MhcCase, COLUMNS};
use super::shape::MhcShape;
use super::stages::{Impl, Placement};
use crate::device::CudaDevice;

/// One case of the grid: a stage of an implementation in one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridCase {
    /// The configuration's position in the run's list of them.
    pub configuration: usize,
    pub case: MhcCase,
}

pub struct MhcGrid {
    configurations: Vec<(Placement, MhcShape)>,
    impls: Vec<Impl>,
    threads: usize,
    /// The GPU the command opened for the placements that use one.
    gpu: Option<CudaDevice>,
    /// Each round's timing of an implementation's interleaved stages.
    rounds: Vec<MeasureConfig>,
    /// The configuration under way and its suite (which holds its inputs).
    current: RefCell<Option<(usize, Rc<MhcSuite>)>>,
    /// The rows of the configuration under way, in case order.
    rows: RefCell<Vec<(MhcCase, Row)>>,
}

impl MhcGrid {
    /// The grid of `configurations` (in the order they run), each timing every stage of
    /// `impls` with `threads` worker threads in the fused CPU kernels, on `gpu` where a
    /// placement uses one, an implementation's stages interleaved in `rounds`.
    pub fn new(
        configurations: Vec<(Placement, MhcShape)>,
        impls: Vec<Impl>,
        threads: usize,
        gpu: Option<CudaDevice>,
        rounds: Vec<MeasureConfig>,
    ) -> MhcGrid {
        MhcGrid {
            configurations,
            impls,
            threads,
            gpu,
            rounds,
            current: RefCell::new(None),
            rows: RefCell::new(Vec::new()),
        }
    }

    /// Where configuration `index` runs and its sizes.
    pub fn configuration(&self, index: usize) -> Option<(Placement, MhcShape)> {
        self.configurations.get(index).copied()
    }

    /// How many rows one configuration writes (six stages per implementation).
    pub fn rows_per_configuration(&self) -> usize {
        case_order(&self.impls).len()
    }

    /// Ends the configuration under way: its inputs are freed before the next one's are
    /// made, and its rows come back in case order.
    pub fn finish_configuration(&self) -> Vec<(MhcCase, Row)> {
        *self.current.borrow_mut() = None;
        std::mem::take(&mut *self.rows.borrow_mut())
    }

    /// The suite of `configuration`, made on its first case (the previous one's dropped
    /// first, so two configurations' inputs never live at once).
    fn suite(&self, configuration: usize) -> Result<Rc<MhcSuite>, CaseError> {
        let mut slot = self.current.borrow_mut();
        if let Some((index, suite)) = slot.as_ref() {
            if *index == configuration {
                return Ok(suite.clone());
            }
        }
        *slot = None;
        let (placement, shape) = self.configuration(configuration).ok_or_else(|| {
            CaseError::new(
                CaseStatus::Error,
                format!("no configuration {configuration} in this run"),
            )
        })?;
        let suite = Rc::new(MhcSuite::new(MhcSettings {
            shape,
            placement,
            impls: self.impls.clone(),
            threads: self.threads,
            gpu: self.gpu.clone(),
            rounds: self.rounds.clone(),
        }));
        *slot = Some((configuration, suite.clone()));
        Ok(suite)
    }
}

impl Suite for MhcGrid {
    type Case = GridCase;
    type Device = ();

    fn columns(&self) -> Vec<&'static str> {
        COLUMNS.to_vec()
    }

    fn cases(&self) -> Vec<GridCase> {
        let order = case_order(&self.impls);
        (0..self.configurations.len())
            .flat_map(|configuration| {
                order.iter().map(move |&case| GridCase {
                    configuration,
                    case,
                })
            })
            .collect()
    }

    fn same_group(&self, previous: &GridCase, case: &GridCase) -> bool {
        previous.configuration == case.configuration
    }

    fn unit(&self) -> &'static str {
        "configurations"
    }

    fn skip(&self, case: &GridCase, _done: &[(GridCase, CaseStatus)]) -> Option<String> {
        match self.suite(case.configuration) {
            Ok(suite) => suite.skip(&case.case, &[]),
            Err(e) => Some(e.message),
        }
    }

    fn measure_case(
        &self,
        case: &GridCase,
        device: &(),
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        self.suite(case.configuration)?
            .measure_case(&case.case, device, time)
    }

    fn row(&self, case: &GridCase, outcome: &CaseOutcome) -> Row {
        let row = match self.suite(case.configuration) {
            Ok(suite) => suite.row(&case.case, outcome),
            Err(e) => Row::new()
                .with("Status", CaseStatus::Error.as_str())
                .with("Note", e.message),
        };
        self.rows.borrow_mut().push((case.case, row.clone()));
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::mhc::MhcDtype;
    use replay_core::measure::{MeasureConfig, MonotonicClock};
    use replay_core::shard::Shard;
    use replay_core::suite::{run_grid, shard_cases, CaseProgress, GridEvents};

    fn grid(batches: &[usize]) -> MhcGrid {
        MhcGrid::new(
            batches
                .iter()
                .map(|&b| {
                    let shape = MhcShape::new(b, 8, 16, 4, MhcDtype::Float32).unwrap();
                    (Placement::CpuOnly, shape)
                })
                .collect(),
            vec![Impl::Torch, Impl::Fused],
            1,
            None,
            vec![MeasureConfig::fixed_runs(0, 1)],
        )
    }

    #[test]
    fn a_shard_takes_whole_configurations() {
        let g = grid(&[1, 2, 4]);
        assert_eq!(g.rows_per_configuration(), 12);
        assert_eq!(g.cases().len(), 36);
        let second = shard_cases(&g, Shard::new(2, 3).unwrap());
        assert_eq!(second.len(), 12);
        assert!(second.iter().all(|c| c.configuration == 1));
        let first = shard_cases(&g, Shard::new(1, 2).unwrap());
        let configurations: Vec<usize> = first.iter().map(|c| c.configuration).collect();
        assert_eq!(configurations, [[0; 12], [2; 12]].concat());
        assert_eq!(g.unit(), "configurations");
    }

    /// Each configuration's rows as the grid hands them back, and whether its inputs were
    /// still held when it did.
    struct Ends<'g> {
        grid: &'g MhcGrid,
        ended: Vec<(usize, usize, Option<usize>)>,
    }

    impl GridEvents<GridCase> for Ends<'_> {
        fn case_finished(&mut self, _: CaseProgress<'_, GridCase>) {}
        fn group_finished(&mut self, last: &GridCase) {
            let rows = self.grid.finish_configuration();
            let held = self.grid.current.borrow().as_ref().map(|(i, _)| *i);
            self.ended.push((last.configuration, rows.len(), held));
        }
    }

    #[test]
    fn each_configuration_ends_with_its_rows_and_frees_its_inputs() {
        let g = grid(&[1, 2]);
        let mut rows: Vec<Row> = Vec::new();
        let mut ends = Ends {
            grid: &g,
            ended: Vec::new(),
        };
        let tally = run_grid(
            &g,
            Shard::WHOLE,
            &[],
            &(),
            &MeasureConfig::fixed_runs(0, 1),
            &MonotonicClock::new(),
            &mut rows,
            &mut ends,
        )
        .unwrap();
        assert_eq!(ends.ended, [(0, 12, None), (1, 12, None)]);
        assert_eq!(rows.len(), 24);
        let batches: Vec<u64> = rows
            .iter()
            .map(|r| r.get("BatchSize").and_then(|v| v.as_u64()).unwrap())
            .collect();
        assert_eq!(batches, [[1; 12], [2; 12]].concat());
        // Stages 0 and 4 do not apply without a GPU: two skipped rows per implementation.
        assert_eq!(tally.skipped, 8);
        assert_eq!(tally.ok, 16, "{rows:?}");
    }
}
