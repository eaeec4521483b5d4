//! What `replay compare` reports: the aggregation of measured and predicted times, the text
//! summary and the HTML page.

pub mod aggregate;
pub mod comparison;
pub mod coverage_text;
pub mod disturbed;
pub mod energy_report;
pub mod html;
pub mod invariants;
pub mod signature_label;
pub mod table;

pub use coverage_text::{percent_text, unseen_in_file, unseen_text};

/// An error in percent for the table and the page: `+4.2%`, or `n/a` where there is none
/// (nothing was measured).
pub fn signed_percent(error: Option<f64>) -> String {
    error
        .map(|x| format!("{x:+.1}%"))
        .unwrap_or_else(|| "n/a".into())
}
