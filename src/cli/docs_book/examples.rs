//! The book's examples that run replay, parsed with replay's own command-line definitions.

use std::path::PathBuf;

use super::book::repo_root;
use super::markdown::lines;
use super::shell::{replay_words, shell_pieces};

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
    let core = replay_cli::parse::try_parse_from::<replay_cli::Cli, _, _>(words);
    match core {
        Ok(cli) => {
            use replay_cli::Command;
            if matches!(
                cli.command,
                Command::Classify(_) | Command::Predict(_) | Command::Merge(_)
            ) {
                return Ok(());
            }
            done(replay_cli::parse::try_parse_from::<crate::cli::Cli, _, _>(words).map(|_| ()))
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
pub(super) fn unparsed_examples(files: &[PathBuf]) -> (usize, usize, Vec<String>) {
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
