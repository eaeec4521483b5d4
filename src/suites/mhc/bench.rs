//! The mHC benchmark as a core [`Suite`]: one case per (implementation, stage), in the
//! seed's order, each checked against torch's stage on the same input before it is timed.
//!
//! The inputs are made once, on first use, and shared by every case (`prepare.rs`); each
//! stage's work is made by its implementation's function in `case_work.rs`. An
//! implementation's stages and its total are timed together, at its first case, in
//! interleaved rounds ([`measure_interleaved`], the run's [`MhcSettings::rounds`]): round r
//! times each stage in turn for its share of the samples, so that every stage sees the same
//! stretch of a machine whose speed drifts and the total is comparable with its stages
//! (timed one after the other, each in its own window, a total came out below its own first
//! stage). The runner's one-target `time` is therefore not used; the cases that follow take
//! their stage's pooled result. A configuration that does not fit, or fails to allocate,
//! makes every case a status row.

use std::cell::RefCell;
use std::collections::HashMap;

use replay_core::export::rows::Row;
use replay_core::measure::interleave::measure_interleaved;
use replay_core::measure::{Measurement, MonotonicClock, Target};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};

use super::case_work::{
    copy_work, fused_cpu_work, fused_cuda_work, measure_error, torch_work, Work,
};
use super::prepare::{prepare, Prepared};
use super::rows::{self, MhcCase, COLUMNS};
pub use super::settings::MhcSettings;
use super::stages::{Impl, Placement, Stage};
use super::MhcError;

/// A stage's result and the note of its check, waiting for its case.
type Timed = (Result<Measurement, CaseError>, String);

pub struct MhcSuite {
    settings: MhcSettings,
    prepared: RefCell<Option<Result<Prepared, CaseError>>>,
    /// The stages of the implementation under way, timed together, until their cases come.
    timed: RefCell<HashMap<MhcCase, Timed>>,
    /// The last case's check, for its row's note.
    note: RefCell<String>,
}

impl MhcSuite {
    pub fn new(settings: MhcSettings) -> MhcSuite {
        MhcSuite {
            settings,
            prepared: RefCell::new(None),
            timed: RefCell::new(HashMap::new()),
            note: RefCell::new(String::new()),
        }
    }

    pub fn settings(&self) -> &MhcSettings {
        &self.settings
    }

    /// The work of `case`, checked, with its note; `Err` when the case ends before it is
    /// timed.
    fn work<'p>(
        &self,
        case: &MhcCase,
        p: &'p Prepared,
        note: &mut String,
    ) -> Result<Work<'p>, CaseError> {
        let s = &self.settings;
        if case.imp == Impl::Torch && matches!(case.stage, Stage::Linear | Stage::Total) {
            if let Some(why) = p.torch_linear_refusal.clone() {
                return Err(CaseError::new(CaseStatus::Oom, why));
            }
        }
        match (case.imp, case.stage, s.placement) {
            (_, Stage::D2hCopy | Stage::H2dCopy, _) => copy_work(case.stage, s, p, note),
            (Impl::Torch, stage, _) => torch_work(stage, s, p, note),
            (Impl::Fused, stage, Placement::Gpu) => fused_cuda_work(stage, s, p, note),
            (Impl::Fused, stage, _) => fused_cpu_work(stage, s, p, note),
        }
    }

    /// Times every stage of `imp` that applies here, interleaved, and keeps each result (and
    /// note) for its case. A stage whose work cannot be made keeps its error and no note.
    fn time_implementation(&self, imp: Impl, p: &Prepared) {
        let cases: Vec<MhcCase> = Stage::ALL
            .iter()
            .filter(|&&stage| self.settings.placement.not_applicable(stage).is_none())
            .map(|&stage| MhcCase { imp, stage })
            .collect();
        let mut made: Vec<(MhcCase, Result<Work<'_>, CaseError>, String)> = cases
            .into_iter()
            .map(|case| {
                let mut note = String::new();
                let work = self.work(&case, p, &mut note);
                (case, work, note)
            })
            .collect();
        let mut targets: Vec<&mut dyn Target> = made
            .iter_mut()
            .filter_map(|(_, work, _)| work.as_mut().ok().map(|w| &mut **w as &mut dyn Target))
            .collect();
        let mut measured =
            measure_interleaved(&mut targets, &self.settings.rounds, &MonotonicClock::new())
                .into_iter();
        drop(targets);
        let mut timed = self.timed.borrow_mut();
        for (case, work, note) in made {
            let entry = match work {
                Ok(_) => match measured.next() {
                    Some(result) => (result.map(|r| r.measurement).map_err(measure_error), note),
                    None => (
                        Err(CaseError::new(CaseStatus::Error, "the stage was not timed")),
                        note,
                    ),
                },
                Err(e) => (Err(e), String::new()),
            };
            timed.insert(case, entry);
        }
    }

    fn time_case(&self, case: &MhcCase, p: &Prepared) -> Result<Measurement, CaseError> {
        if !self.timed.borrow().contains_key(case) {
            self.time_implementation(case.imp, p);
        }
        let (result, note) = self.timed.borrow_mut().remove(case).unwrap_or_else(|| {
            (
                Err(CaseError::new(CaseStatus::Error, "the stage was not timed")),
                String::new(),
            )
        });
        *self.note.borrow_mut() = note;
        result
    }
}

/// The cases of one configuration in the order they run and their rows are written: every
/// stage of the first implementation, then of the next (what `replay merge` reads rows back by).
pub fn case_order(impls: &[Impl]) -> Vec<MhcCase> {
    impls
        .iter()
        .flat_map(|&imp| Stage::ALL.iter().map(move |&stage| MhcCase { imp, stage }))
        .collect()
}

impl Suite for MhcSuite {
    type Case = MhcCase;
    type Device = ();

    fn columns(&self) -> Vec<&'static str> {
        COLUMNS.to_vec()
    }

    fn cases(&self) -> Vec<MhcCase> {
        case_order(&self.settings.impls)
    }

    fn skip(&self, case: &MhcCase, _done: &[(MhcCase, CaseStatus)]) -> Option<String> {
        self.note.borrow_mut().clear();
        // A stage that does not apply never allocates the inputs.
        self.settings
            .placement
            .not_applicable(case.stage)
            .map(str::to_string)
    }

    fn measure_case(
        &self,
        case: &MhcCase,
        _device: &(),
        _time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        let mut slot = self.prepared.borrow_mut();
        if slot.is_none() {
            *slot = Some(prepare(&self.settings).map_err(MhcError::into_case_error));
        }
        match slot.as_mut() {
            Some(Ok(p)) => self.time_case(case, p),
            Some(Err(e)) => Err(e.clone()),
            None => Err(CaseError::new(
                CaseStatus::Error,
                "inputs were not prepared",
            )),
        }
    }

    fn row(&self, case: &MhcCase, outcome: &CaseOutcome) -> Row {
        let s = &self.settings;
        rows::row(
            &s.shape,
            &s.placement.device_name(s.gpu_spec()),
            case,
            outcome,
            &self.note.borrow(),
        )
    }
}
