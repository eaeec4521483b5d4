//! `replay predict --what-if`: each line of the input is one expression; those that parse
//! are applied in order to a small real trace's timeline, as `predict` applies them.

use std::path::Path;

use super::embedded::embedded_trace;
use super::target::text;
use crate::predict::what_if::Change;
use crate::predict::{predict_trace, PredictRequest, WhatIf};

pub fn what_if(data: &[u8]) {
    let Some(text) = text(data) else {
        return;
    };
    let what_ifs: Vec<WhatIf> = text
        .lines()
        .filter_map(|line| line.parse::<WhatIf>().ok())
        // `durations=FILE` reads a file named by the input: not the fuzzer's to open.
        .filter(|what_if| !matches!(what_if.change, Change::Durations { .. }))
        .collect();
    if what_ifs.is_empty() {
        return;
    }
    let Some(trace) = embedded_trace() else {
        return;
    };
    let request = PredictRequest {
        what_ifs,
        ..PredictRequest::default()
    };
    if let Ok(output) = predict_trace(trace, Path::new("h200_gpt2_small.json.gz"), &request) {
        for outcome in &output.outcomes {
            let _ = format!("{outcome:?}");
        }
    }
}
