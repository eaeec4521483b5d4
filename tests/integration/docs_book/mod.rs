//! The book against the code (issue 52): `README.md` and every page of `docs/` (an mdBook,
//! `docs/SUMMARY.md` its table of contents).
//!
//! - Every relative link `[..](path)` or `[..](path#anchor)` outside code points at a file or
//!   folder that exists; with an anchor into a Markdown file (or `#anchor` alone, into the page
//!   itself), at one of its headings, by GitHub's and mdBook's rule for heading ids.
//! - Every command line of an example that runs replay parses with replay's own command-line
//!   definitions, in process (a `--help`-level check: nothing runs, no file is read). The
//!   commands `replay` runs itself (`classify`, `predict`, `merge`) parse with
//!   `replay_cli::Cli`; the ones it hands to `replay-torch` with `replay::cli::Cli`.
//!   Checks made after parsing (a timing flag the command does not use, a file that is not
//!   there) are not made here.
//! - Every page of `docs/` is in `docs/SUMMARY.md` (mdBook renders nothing else), and the
//!   README is at most 400 lines.
//!
//! What counts as an example's command line: in a fenced block whose info string is empty,
//! `console`, `text`, `bash`, `sh` or `shell`, a line that starts with the prompt `$ ` (in
//! `bash`, `sh` and `shell` blocks every line that is not a comment), joined with its `\`
//! continuation lines. The shell splits it at `;`, `&&`, `||`, `|` and `&`; a piece whose
//! first word (after `VAR=value` assignments and `do`, `then`, `time`) is `replay`,
//! `./target/release/replay` or `target/release/replay` is checked. Words are split as the
//! shell does (quotes, backslashes); `$VAR`, `${..}`, `$(..)` and `$?` stand for the value `1`;
//! redirections (`> FILE`, `2>/dev/null`, `2>&1`) and `# comments` are dropped. A line that
//! elides arguments with `...` or `…` is skipped and counted.

mod book;
mod examples;
mod links;
mod markdown;
mod shell;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use book::{book_files, repo_root};
use examples::unparsed_examples;
use links::{broken_links, normalize};
use markdown::{lines, links_in};

#[test]
fn every_relative_link_of_the_readme_and_the_book_points_at_something() {
    let files = book_files();
    let (checked, problems) = broken_links(&files);
    println!("{checked} relative links in {} files", files.len());
    assert!(
        checked >= 50,
        "only {checked} links found: is the scan broken?"
    );
    assert!(
        problems.is_empty(),
        "{} broken links (fix the link, or the heading it names):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_replay_command_line_of_an_example_still_parses() {
    let files = book_files();
    let (checked, elided, problems) = unparsed_examples(&files);
    println!("{checked} replay command lines parsed, {elided} with elided arguments skipped");
    assert!(
        checked >= 80,
        "only {checked} command lines found: is the scan broken?"
    );
    assert!(
        problems.is_empty(),
        "{} example command lines do not parse with replay's flags (a flag renamed or removed: \
         change the example, and say so in docs/changelog.md):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_page_of_the_book_is_in_its_summary_and_the_readme_is_short() {
    let root = repo_root();
    let summary = std::fs::read_to_string(root.join("docs/SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = lines(&summary)
        .iter()
        .flat_map(|l| links_in(l.text))
        .map(|(_, _, target)| normalize(&Path::new("docs").join(target)))
        .collect();
    let missing: Vec<String> = book_files()
        .into_iter()
        .filter(|f| f.starts_with("docs") && f != Path::new("docs/SUMMARY.md"))
        .filter(|f| !listed.contains(f))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "pages missing from docs/SUMMARY.md (mdBook renders only what it lists): {}",
        missing.join(", ")
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let count = readme.lines().count();
    assert!(
        count <= 400,
        "README.md has {count} lines, over 400: move the detail into docs/"
    );
}
