//! The book against the code (issue 52): `README.md` and every page of `docs/` (an mdBook,
//! `docs/SUMMARY.md` its table of contents).
//!
//! - Every relative link `[..](path)` or `[..](path#anchor)` outside code points at a file or
//!   folder that exists; with an anchor into a Markdown file (or `#anchor` alone, into the page
//!   itself), at one of its headings, by GitHub's and mdBook's rule for heading ids.
//! - Every command line of an example that runs replay parses with replay's own command-line
//!   definitions, in process (a `--help`-level check: nothing runs, no file is read). The
//!   commands `replay` runs itself (`classify`, `predict`, `merge`) parse with
//!   `replay_core::cli::Cli`; the ones it hands to `replay-torch` with `replay::cli::Cli`.
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

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every `.md` file under `docs/`, relative to the checkout, sorted.
fn book_files() -> Vec<PathBuf> {
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

/// A line of a Markdown file with where it is (1-based), and the info string of the fenced
/// block it is in (`None` outside a block).
struct Line<'a> {
    number: usize,
    text: &'a str,
    fence: Option<&'a str>,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut fence: Option<(&str, &str)> = None; // (the fence's marker, its info string)
    let mut out = Vec::new();
    for (i, text) in text.lines().enumerate() {
        let trimmed = text.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                let info = trimmed.trim_start_matches(m.chars().next().unwrap()).trim();
                fence = Some((m, info.split_whitespace().next().unwrap_or("")));
                continue;
            }
            (Some((open, _)), Some(m)) if m == open => {
                fence = None;
                continue;
            }
            _ => {}
        }
        out.push(Line {
            number: i + 1,
            text,
            fence: fence.map(|(_, info)| info),
        });
    }
    out
}

/// A heading's id as GitHub and mdBook make it: lower case, letters, digits, `-` and `_`
/// kept, spaces made `-`, everything else dropped; a repeated id gets `-1`, `-2`, ...
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut ids = BTreeSet::new();
    for line in lines(text).iter().filter(|l| l.fence.is_none()) {
        let Some(title) = line
            .text
            .strip_prefix('#')
            .map(|t| t.trim_start_matches('#'))
            .filter(|t| t.starts_with(' '))
        else {
            continue;
        };
        let title = strip_links(title.trim());
        let id: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        ids.insert(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    ids
}

/// `[label](target)` becomes `label` (a heading's id is made from the text shown).
fn strip_links(text: &str) -> String {
    let mut out = text.to_string();
    for (start, end, _) in links_in(text).into_iter().rev() {
        let label_end = start + text[start..].find("](").unwrap();
        out.replace_range(start..end, &text[start + 1..label_end]);
    }
    out
}

/// The inline links of one line outside code spans: (byte start of `[`, byte end after `)`,
/// target).
fn links_in(line: &str) -> Vec<(usize, usize, String)> {
    // Code spans hide what they hold: blank them out, keeping byte offsets.
    let mut visible = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            visible.push(' ');
        } else if in_code {
            visible.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            visible.push(c);
        }
    }
    let mut links = Vec::new();
    let mut from = 0;
    while let Some(at) = visible[from..].find("](") {
        let open_target = from + at + 2;
        let Some(len) = visible[open_target..].find(')') else {
            break;
        };
        let close = open_target + len;
        // The label's `[`: the nearest one before `](` (labels here hold no brackets).
        let start = visible[..from + at].rfind('[').unwrap_or(from + at);
        let target = line[open_target..close]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches('<')
            .trim_end_matches('>')
            .to_string();
        links.push((start, close + 1, target));
        from = close + 1;
    }
    links
}

/// `path` with `.` and `..` folded away (the file need not exist).
fn normalize(path: &Path) -> PathBuf {
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
fn broken_links(files: &[PathBuf]) -> (usize, Vec<String>) {
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

/// One piece of a shell command line: its words, as the shell would pass them.
fn shell_pieces(line: &str) -> Vec<Vec<String>> {
    let mut pieces = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut skip_next_word = false;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let end_word =
        |word: &mut String, in_word: &mut bool, skip: &mut bool, pieces: &mut Vec<Vec<String>>| {
            if *in_word {
                if *skip {
                    *skip = false;
                } else {
                    pieces.last_mut().unwrap().push(std::mem::take(word));
                }
            }
            word.clear();
            *in_word = false;
        };
    // `$NAME`, `${..}`, `$(..)`, `$?`: the expansion stands for "1". Returns the index after it.
    let expand = |i: usize, word: &mut String| -> usize {
        let mut j = i + 1;
        match chars.get(j) {
            Some('{') | Some('(') => {
                let close = if chars[j] == '{' { '}' } else { ')' };
                while j < chars.len() && chars[j] != close {
                    j += 1;
                }
                j += 1;
            }
            Some(c) if c.is_alphanumeric() || *c == '_' => {
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
            }
            Some('?') | Some('#') | Some('@') => j += 1,
            _ => {
                word.push('$');
                return j;
            }
        }
        word.push('1');
        j
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
                i += 1;
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    match chars[i] {
                        '\\' if i + 1 < chars.len() => {
                            word.push(chars[i + 1]);
                            i += 2;
                        }
                        '$' => i = expand(i, &mut word),
                        other => {
                            word.push(other);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '\\' => {
                in_word = true;
                if let Some(&next) = chars.get(i + 1) {
                    word.push(next);
                }
                i += 2;
            }
            '$' => {
                in_word = true;
                i = expand(i, &mut word);
            }
            ';' | '|' | '&' => {
                // `2>&1` and `&>` are redirections, handled below.
                end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
                while i < chars.len() && matches!(chars[i], ';' | '|' | '&') {
                    if chars[i] == '&' && chars.get(i + 1) == Some(&'>') {
                        break;
                    }
                    i += 1;
                }
                if chars.get(i) != Some(&'>') {
                    pieces.push(Vec::new());
                }
            }
            '>' | '<' => {
                // A file descriptor written just before (`2>`) belongs to the redirection.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
                i += 1;
                while i < chars.len() && matches!(chars[i], '>' | '<') {
                    i += 1;
                }
                if chars.get(i) == Some(&'&') {
                    // `>&2`: a descriptor, no file name follows.
                    i += 1;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                } else {
                    skip_next_word = true;
                }
            }
            other => {
                in_word = true;
                word.push(other);
                i += 1;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
    pieces.retain(|p| !p.is_empty());
    pieces
}

/// The words of a piece from `replay` on, or `None` when the piece runs something else.
fn replay_words(piece: &[String]) -> Option<Vec<String>> {
    let mut words = piece.iter().skip_while(|w| {
        matches!(w.as_str(), "do" | "then" | "time" | "!" | "else")
            || w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
    });
    let program = words.next()?;
    let program = program.strip_prefix("./").unwrap_or(program);
    matches!(program, "replay" | "target/release/replay").then(|| {
        std::iter::once("replay".to_string())
            .chain(words.cloned())
            .collect()
    })
}

/// An example's command line: where it is, and its text with continuation lines joined.
struct Example {
    at: String,
    command: String,
}

fn examples(files: &[PathBuf]) -> Vec<Example> {
    let root = repo_root();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let lines = lines(&text);
        let mut i = 0;
        while i < lines.len() {
            let line = &lines[i];
            i += 1;
            let Some(info) = line.fence else { continue };
            let script = matches!(info, "bash" | "sh" | "shell");
            if !(script || matches!(info, "" | "console" | "text")) {
                continue;
            }
            let trimmed = line.text.trim();
            let command = match trimmed.strip_prefix("$ ") {
                Some(command) => command,
                None if script && !trimmed.starts_with('#') => trimmed,
                None => continue,
            };
            let mut command = command.to_string();
            while command.ends_with('\\') && i < lines.len() && lines[i].fence.is_some() {
                command.pop();
                command.push(' ');
                command.push_str(lines[i].text.trim());
                i += 1;
            }
            out.push(Example {
                at: format!("{}:{}", file.display(), line.number),
                command,
            });
        }
    }
    out
}

/// Parses `words` (`replay COMMAND ...`) as the executable that runs the command would.
fn parse(words: &[String]) -> Result<(), clap::Error> {
    let done = |result: Result<(), clap::Error>| match result {
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            Ok(())
        }
        other => other,
    };
    let core = replay_core::cli::parse::try_parse_from::<replay_core::cli::Cli, _, _>(words);
    match core {
        Ok(cli) => {
            use replay_core::cli::Command;
            if matches!(
                cli.command,
                Command::Classify(_) | Command::Predict(_) | Command::Merge(_)
            ) {
                return Ok(());
            }
            done(
                replay_core::cli::parse::try_parse_from::<replay::cli::Cli, _, _>(words)
                    .map(|_| ()),
            )
        }
        Err(e) => done(Err(e)),
    }
}

/// clap's message without its usage lines and the `--help` hint, on one line.
fn first_lines(error: &clap::Error) -> String {
    error
        .to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every example's command lines that do not parse, as `FILE:LINE: ...`, with how many were
/// checked and how many skipped as elided.
fn unparsed_examples(files: &[PathBuf]) -> (usize, usize, Vec<String>) {
    let (mut checked, mut elided) = (0, 0);
    let mut problems = Vec::new();
    for example in examples(files) {
        for piece in shell_pieces(&example.command) {
            let Some(words) = replay_words(&piece) else {
                continue;
            };
            if words.iter().any(|w| w.contains("...") || w.contains('…')) {
                elided += 1;
                continue;
            }
            checked += 1;
            if let Err(e) = parse(&words) {
                problems.push(format!(
                    "{}: `{}` no longer parses: {}",
                    example.at,
                    words.join(" "),
                    first_lines(&e)
                ));
            }
        }
    }
    (checked, elided, problems)
}

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

#[test]
fn the_shell_words_are_split_as_the_shell_splits_them() {
    assert_eq!(
        shell_pieces(
            r#"for i in 1 2; do replay isolated --shard $i/2 --out "a b" -q | tail -1; done"#
        ),
        vec![
            vec!["for", "i", "in", "1", "2"],
            vec!["do", "replay", "isolated", "--shard", "1/2", "--out", "a b", "-q"],
            vec!["tail", "-1"],
            vec!["done"],
        ]
    );
    assert_eq!(
        shell_pieces(
            r#"X=1 ./target/release/replay predict --what-if 'tier2*0.5' 2>/dev/null > out.txt # c"#
        ),
        vec![vec![
            "X=1",
            "./target/release/replay",
            "predict",
            "--what-if",
            "tier2*0.5"
        ]]
    );
    assert_eq!(
        shell_pieces("replay full --model m.pt 2>&1 && echo \"exit $?\""),
        vec![
            vec!["replay", "full", "--model", "m.pt"],
            vec!["echo", "exit 1"]
        ]
    );
    assert_eq!(
        replay_words(&shell_pieces("do X=1 ./target/release/replay devices")[0]),
        Some(vec!["replay".to_string(), "devices".to_string()])
    );
    assert_eq!(
        replay_words(&shell_pieces("replayed 3 signatures")[0]),
        None
    );
}

#[test]
fn a_heading_id_is_githubs() {
    let ids = heading_ids(
        "# `replay compare`\n## Compiled models: `compare --compile`\n```\n# not a heading\n```\n## A\n## A\n## On a cluster: a job's thousand rank traces\n",
    );
    let want = [
        "replay-compare",
        "compiled-models-compare---compile",
        "a",
        "a-1",
        "on-a-cluster-a-jobs-thousand-rank-traces",
    ];
    assert_eq!(ids, want.iter().map(|s| s.to_string()).collect());
}
