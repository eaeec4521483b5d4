//! What `replay compare` reports: the aggregation of measured and predicted times, the text
//! summary and the HTML page.

pub mod comparison;
pub mod html;
pub mod invariants;
pub mod signature_label;
pub mod table;
