//! One check's outcome: which stage and tier it belongs to, its name, whether it passed and
//! what it found.

use serde::Serialize;

/// The part of the selftest a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// One replay of a tier (or the device's own kernels, tier 0).
    Replay,
    /// The whole model (`--model`): tier 0.
    Model,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub stage: Stage,
    pub tier: u8,
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

pub(crate) fn check(tier: u8, name: &str, result: Result<String, String>) -> Check {
    let (passed, detail) = match result {
        Ok(detail) => (true, detail),
        Err(detail) => (false, detail),
    };
    Check {
        stage: Stage::Replay,
        tier,
        name: name.into(),
        passed,
        detail,
    }
}

/// A check of the whole-model stage (tier 0, stage `model`).
pub fn model_check(name: &str, result: Result<String, String>) -> Check {
    Check {
        stage: Stage::Model,
        ..check(0, name, result)
    }
}
