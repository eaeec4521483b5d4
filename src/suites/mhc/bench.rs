//! The mHC benchmark as a core [`Suite`]: one case per (implementation, stage), in the
//! seed's order, each checked against torch's stage on the same input before it is timed.
//!
//! The inputs are made once, on first use, and shared by every case (`prepare.rs`); each
//! case is timed by its implementation's function in `case_work.rs`. A configuration that
//! does not fit, or fails to allocate, makes every case a status row.

use std::cell::RefCell;

use replay_core::export::rows::Row;
use replay_core::measure::{Measurement, Target};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};

use super::case_work::{time_copy, time_fused_cpu, time_fused_cuda, time_torch, TimeFn};
use super::prepare::{prepare, Prepared};
use super::rows::{self, MhcCase, COLUMNS};
pub use super::settings::MhcSettings;
use super::stages::{Impl, Placement, Stage};
use super::MhcError;

pub struct MhcSuite {
    settings: MhcSettings,
    prepared: RefCell<Option<Result<Prepared, CaseError>>>,
    /// The last case's check, for its row's note.
    note: RefCell<String>,
}

impl MhcSuite {
    pub fn new(settings: MhcSettings) -> MhcSuite {
        MhcSuite {
            settings,
            prepared: RefCell::new(None),
            note: RefCell::new(String::new()),
        }
    }

    pub fn settings(&self) -> &MhcSettings {
        &self.settings
    }

    /// The note of the case that just ended (what its check found).
    pub fn last_note(&self) -> String {
        self.note.borrow().clone()
    }

    fn time_case(
        &self,
        case: &MhcCase,
        p: &mut Prepared,
        time: &mut TimeFn<'_>,
    ) -> Result<Measurement, CaseError> {
        let s = &self.settings;
        if case.imp == Impl::Torch && matches!(case.stage, Stage::Linear | Stage::Total) {
            if let Some(why) = p.torch_linear_refusal.clone() {
                return Err(CaseError::new(CaseStatus::Oom, why));
            }
        }
        let mut note = String::new();
        let result = match (case.imp, case.stage, s.placement) {
            (_, Stage::D2hCopy | Stage::H2dCopy, _) => {
                time_copy(case.stage, s, p, time, &mut note)?
            }
            (Impl::Torch, stage, _) => time_torch(stage, s, p, time, &mut note)?,
            (Impl::Fused, stage, Placement::Gpu { .. }) => {
                time_fused_cuda(stage, s, p, time, &mut note)?
            }
            (Impl::Fused, stage, _) => time_fused_cpu(stage, s, p, time, &mut note)?,
        };
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
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        let mut slot = self.prepared.borrow_mut();
        if slot.is_none() {
            *slot = Some(prepare(&self.settings).map_err(MhcError::into_case_error));
        }
        match slot.as_mut() {
            Some(Ok(p)) => self.time_case(case, p, time),
            Some(Err(e)) => Err(e.clone()),
            None => Err(CaseError::new(
                CaseStatus::Error,
                "inputs were not prepared",
            )),
        }
    }

    fn row(&self, case: &MhcCase, outcome: &CaseOutcome) -> Row {
        rows::row(
            &self.settings.shape,
            self.settings.placement,
            case,
            outcome,
            &self.note.borrow(),
        )
    }
}
