//! The folder-level import graph (issue 52): the file graph of `graph.rs` folded into folders,
//! so that two folders whose files import each other (no file cycle, but a layer cycle) show.
//!
//! A file `a/b/c.rs` belongs to folder `a/b`, and so does `a/b/mod.rs`. A file directly in a
//! crate's `src/` (`crates/core/src/spill.rs`, `src/error.rs`, `lib.rs`, `main.rs`) is a unit
//! of its own, named as its module (`crates/core/src/spill`), which is also the name of the
//! folder of its submodules when it has one. Since the file edges already lead through
//! re-exports to the file that defines the name, a hub that only re-exports joins no folders.
//!
//! A folder and the folders inside it are one layer: `predict/build` using `predict`'s types
//! while `predict` calls into `predict/build` is how a module keeps its parts, no cycle. Any
//! other edge is lifted to the two folders under the closest folder both sides share, so that
//! `predict/build -> report` and `report -> predict` make the pair `predict <-> report`, and
//! `predict/build <-> predict/stream` is a pair of its own.

use std::collections::BTreeMap;

use crate::graph::Edges;

/// Whether `dir` is a crate's source root: `src` or `crates/NAME/src`.
fn is_crate_src(dir: &str) -> bool {
    dir == "src"
        || dir
            .strip_prefix("crates/")
            .and_then(|rest| rest.strip_suffix("/src"))
            .is_some_and(|name| !name.is_empty() && !name.contains('/'))
}

/// The folder (or top-level module) that `file` belongs to.
pub fn folder_of(file: &str) -> String {
    let Some((dir, _)) = file.rsplit_once('/') else {
        return file.trim_end_matches(".rs").to_string();
    };
    if is_crate_src(dir) {
        file.trim_end_matches(".rs").to_string()
    } else {
        dir.to_string()
    }
}

/// The two folders under the closest folder that `a` and `b` share, or `None` when one is
/// `b` or inside the other.
fn siblings(a: &str, b: &str) -> Option<(String, String)> {
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
    let common = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
    if common == pa.len() || common == pb.len() {
        return None;
    }
    Some((pa[..=common].join("/"), pb[..=common].join("/")))
}

/// folder -> folder -> the first file use that makes the edge (edges lifted to siblings).
pub fn folder_edges(edges: &Edges) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (from, targets) in edges {
        for (to, why) in targets {
            if let Some((a, b)) = siblings(&folder_of(from), &folder_of(to)) {
                out.entry(a)
                    .or_default()
                    .entry(b)
                    .or_insert_with(|| why.clone());
            }
        }
    }
    out
}

/// One pair of folders that import each other, with one use in each direction.
#[derive(Debug, PartialEq, Eq)]
pub struct FolderPair {
    pub a: String,
    pub b: String,
    pub a_to_b: String,
    pub b_to_a: String,
}

impl FolderPair {
    pub fn describe(&self) -> String {
        format!(
            "{} <-> {}\n    {} -> {}  ({})\n    {} -> {}  ({})",
            self.a, self.b, self.a, self.b, self.a_to_b, self.b, self.a, self.b_to_a
        )
    }
}

/// Every pair of folders (a < b) that import each other.
pub fn folder_pairs(edges: &Edges) -> Vec<FolderPair> {
    let folders = folder_edges(edges);
    let mut out = Vec::new();
    for (a, targets) in &folders {
        for (b, a_to_b) in targets {
            if a >= b {
                continue;
            }
            if let Some(b_to_a) = folders.get(b).and_then(|t| t.get(a)) {
                out.push(FolderPair {
                    a: a.clone(),
                    b: b.clone(),
                    a_to_b: a_to_b.clone(),
                    b_to_a: b_to_a.clone(),
                });
            }
        }
    }
    out
}
