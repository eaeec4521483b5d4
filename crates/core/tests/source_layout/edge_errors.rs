//! Where `anyhow` and `clap` may be named (issue 52): only at the edge, in the command-line code
//! of the executables (the `replay-cli` crate, a `cli/` folder, a `main.rs`). The libraries'
//! modules return their own typed errors (`thiserror`), so a caller can match on them and a
//! message is one type's to word, and take options, not flags.

use std::collections::BTreeMap;

use crate::modules::Tree;
use crate::tokens::{strip_test_items, tokenize, Tok};

/// Whether `file` is command-line code: in the `replay-cli` crate, a `cli/` folder or a
/// `main.rs`.
pub fn is_edge(file: &str) -> bool {
    file.starts_with("crates/cli/")
        || file.split('/').any(|part| part == "cli")
        || file.ends_with("/main.rs")
        || file == "main.rs"
}

/// The crates only command-line code may name.
pub const EDGE_CRATES: &[&str] = &["anyhow", "clap"];

/// `file:line` of every non-test use of one of `names` (crates: `anyhow`, `clap`) in the
/// library modules of `tree` (modules whose crate root is a `lib.rs`) outside command-line
/// code.
pub fn edge_crates_in_libraries(
    tree: &Tree,
    sources: &BTreeMap<String, String>,
    names: &[&str],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for m in &tree.modules {
        let root = &tree.modules[m.crate_root].file;
        if !root.ends_with("lib.rs") || is_edge(&m.file) || !seen.insert(m.file.as_str()) {
            continue;
        }
        let Some(text) = sources.get(&m.file) else {
            continue;
        };
        let tokens = strip_test_items(tokenize(text)).tokens;
        let mut lines: Vec<usize> = tokens
            .iter()
            .filter(|t| matches!(&t.tok, Tok::Ident(name) if names.contains(&name.as_str())))
            .map(|t| t.line)
            .collect();
        lines.dedup();
        out.extend(lines.into_iter().map(|l| format!("{}:{l}", m.file)));
    }
    out
}
