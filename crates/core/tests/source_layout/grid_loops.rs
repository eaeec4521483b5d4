//! One grid runner owns every suite's loop (issue 52 item 1): dealing out a shard's items
//! (`.owns(`) and stopping between items (`stop::check(`) happen only in the core's runner
//! (`replay_core::suite`), the shard module itself and the suite command driver. A suite
//! describes its cases; it does not loop over them. Files that still run a loop of their own
//! are named in [`NOT_YET`], printed on every run, and must leave the list once they no longer
//! do, so the list only shrinks.

use super::{sources, tokens};

/// Where a grid's loop may live.
const OWNERS: &[&str] = &[
    "crates/core/src/suite/",
    "crates/core/src/shard/",
    "src/pipeline/suite_command.rs",
    // The fuzz targets of the shard arithmetic itself (they check `owns`, loop over nothing).
    "crates/core/src/fuzzing/",
];

/// Files that still run a grid loop of their own, and why.
const NOT_YET: &[(&str, &str)] = &[];

/// Each `.owns(` and `stop::check(` in `source` outside its tests, comments and strings:
/// (line, what).
fn grid_loop_uses(source: &str) -> Vec<(usize, &'static str)> {
    let tokens = tokens::strip_test_items(tokens::tokenize(source)).tokens;
    let mut uses = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let next = |k: usize| tokens.get(i + k);
        if t.is_punct('.')
            && next(1).is_some_and(|n| n.is_ident("owns"))
            && next(2).is_some_and(|n| n.is_punct('('))
        {
            uses.push((t.line, ".owns("));
        }
        if t.is_ident("stop")
            && next(1).is_some_and(|n| n.tok == tokens::Tok::PathSep)
            && next(2).is_some_and(|n| n.is_ident("check"))
            && next(3).is_some_and(|n| n.is_punct('('))
        {
            uses.push((t.line, "stop::check("));
        }
    }
    uses
}

#[test]
fn only_the_grid_runner_deals_out_shards_and_stops_between_items() {
    let mut outside = Vec::new();
    let mut clean_but_listed = Vec::new();
    for (path, text) in sources() {
        if OWNERS.iter().any(|owner| path.starts_with(owner)) {
            continue;
        }
        let uses = grid_loop_uses(&text);
        let listed = NOT_YET.iter().find(|(file, _)| *file == path);
        match (uses.is_empty(), listed) {
            (true, Some(_)) => clean_but_listed.push(path),
            (true, None) => {}
            (false, Some((_, why))) => {
                println!("not yet on the grid runner: {path} ({why})");
            }
            (false, None) => outside.extend(
                uses.iter()
                    .map(|(line, what)| format!("{path}:{line}: {what}")),
            ),
        }
    }
    assert!(
        outside.is_empty(),
        "a grid loop outside the core's runner (implement replay_core::suite::Suite and run it \
         with run_resumed or run_grid instead):\n{}",
        outside.join("\n")
    );
    assert!(
        clean_but_listed.is_empty(),
        "no longer run a loop of their own: take them off NOT_YET:\n{}",
        clean_but_listed.join("\n")
    );
}

#[test]
fn the_checker_finds_owns_and_stop_check_in_code_only() {
    let source = "fn run(s: Shard) {\n    if s.owns(3) {}\n    // s.owns(4) in a comment\n    \
                  let _ = \"stop::check(\";\n    replay_core::shard::stop::check(1, 2, \"x\")?;\n}\n\
                  #[cfg(test)]\nmod tests {\n    fn t(s: Shard) { s.owns(1); }\n}\n";
    assert_eq!(grid_loop_uses(source), [(2, ".owns("), (5, "stop::check(")]);
    assert!(grid_loop_uses("fn owns(&self) -> bool { self.owns }\n").is_empty());
}
