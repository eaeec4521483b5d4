//! Where the book is: `README.md` and the pages of `docs/`, in the checkout.

use std::path::{Path, PathBuf};

/// The checkout (the root package's folder).
pub(super) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every `.md` file under `docs/`, relative to the checkout, sorted.
pub(super) fn book_files() -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let entry = entry.unwrap();
            let rel = dir.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                walk(root, &rel, out);
            } else if rel.extension().is_some_and(|e| e == "md") {
                out.push(rel);
            }
        }
    }
    let mut files = vec![PathBuf::from("README.md")];
    walk(&repo_root(), Path::new("docs"), &mut files);
    files.sort();
    files
}
