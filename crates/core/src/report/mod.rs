//! What `replay compare` reports: the aggregation of measured and predicted times, the text
//! summary and the HTML page.

pub mod aggregate;
pub mod comparison;
pub mod coverage_text;
pub mod disturbed;
pub mod energy_report;
pub mod html;
pub mod invariants;
pub mod table;

pub use coverage_text::{unseen_in_file, unseen_text};

use comparison::ComparisonReport;

/// An error in percent for the table and the page: `+4.2%`, or `n/a` where there is none
/// (nothing was measured).
pub fn signed_percent(error: Option<f64>) -> String {
    error
        .map(|x| format!("{x:+.1}%"))
        .unwrap_or_else(|| "n/a".into())
}

/// Whether the model was fed token ids (an integer input, or none named: replay's default
/// token ids), so that its sequence length means something; an image model's header said
/// "sequence length 5" of a float input.
pub fn takes_tokens(report: &ComparisonReport) -> bool {
    let inputs = &report.full_model.inputs;
    inputs.is_empty()
        || inputs
            .iter()
            .any(|i| i.starts_with("int") || i.starts_with("uint"))
}

/// What the model was fed, for the page: the sequence length only for token ids.
pub fn input_text(report: &ComparisonReport) -> String {
    let named = report.full_model.inputs.join(", ");
    match (takes_tokens(report), named.is_empty()) {
        (true, true) => format!("sequence length {}", report.seq_len),
        (true, false) => format!("sequence length {}, input {named}", report.seq_len),
        (false, _) => format!("input {named}"),
    }
}
