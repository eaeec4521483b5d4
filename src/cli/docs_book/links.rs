//! The book's relative links, checked against the checkout.

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

use super::book::repo_root;
use super::markdown::{heading_ids, lines, links_in};

/// `path` with `.` and `..` folded away (the file need not exist).
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every broken relative link of the book, as `FILE:LINE: ...`.
pub(super) fn broken_links(files: &[PathBuf]) -> (usize, Vec<String>) {
    let root = repo_root();
    let mut ids: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    let mut ids_of = |path: &Path| -> Option<BTreeSet<String>> {
        if let Some(found) = ids.get(path) {
            return Some(found.clone());
        }
        let text = std::fs::read_to_string(root.join(path)).ok()?;
        let found = heading_ids(&text);
        ids.insert(path.to_path_buf(), found.clone());
        Some(found)
    };
    let mut checked = 0;
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for line in lines(&text).iter().filter(|l| l.fence.is_none()) {
            for (_, _, target) in links_in(line.text) {
                let is_url = target
                    .split_once(':')
                    .is_some_and(|(scheme, _)| scheme.chars().all(|c| c.is_ascii_alphabetic()));
                if is_url || target.is_empty() {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((path, anchor)) => (path, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let dest = if path.is_empty() {
                    file.clone()
                } else {
                    normalize(&file.parent().unwrap().join(path))
                };
                let at = format!("{}:{}", file.display(), line.number);
                if !root.join(&dest).exists() {
                    problems.push(format!(
                        "{at}: link ({target}) points at {}, which does not exist",
                        dest.display()
                    ));
                    continue;
                }
                let Some(anchor) = anchor.filter(|_| dest.extension().is_some_and(|e| e == "md"))
                else {
                    continue;
                };
                let found = ids_of(&dest).unwrap_or_default();
                if !found.contains(anchor) {
                    problems.push(format!(
                        "{at}: link ({target}): {} has no heading #{anchor} (its headings: {})",
                        dest.display(),
                        found.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
    }
    (checked, problems)
}
