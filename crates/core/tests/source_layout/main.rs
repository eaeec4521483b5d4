//! The source tree's shape (issue 28): no two files import each other, directly or round a
//! longer loop; no two folders import each other (issue 52, `folders.rs`: a cycle between
//! layers that no file cycle shows); no suite imports another suite; no source file holds more
//! than 600 lines of non-test code; `anyhow` only in command-line code (`edge_errors.rs`);
//! libtorch's device named only in `src/device` and `src/torch` (`torch_device.rs`), and a GPU's
//! ordinal read only there too (`device_index.rs`). Read from
//! the sources themselves (the module trees from `mod` declarations, the imports from `use`
//! declarations and paths); see `graph.rs` for the rules that turn them into file-to-file
//! edges. Torch-free: it reads text and links nothing.

mod device_index;
mod edge_errors;
mod folders;
mod graph;
mod grid_loops;
mod modules;
mod tokens;
mod torch_device;

use std::collections::BTreeMap;
use std::path::Path;

use folders::{folder_of, folder_pairs};
use graph::{cycles, describe_cycle, suite_of, Edges};
use modules::{CrateRoot, Tree};

const CORE_LIB: &str = "crates/core/src/lib.rs";
const ROOT_LIB: &str = "src/lib.rs";
const CLI_LIB: &str = "crates/cli/src/lib.rs";

/// Every crate whose sources are under `src/` and `crates/*/src`.
const CRATES: &[CrateRoot] = &[
    CrateRoot {
        root: CORE_LIB,
        externs: &[],
    },
    // replay-cli: the command line (clap, anyhow) and the user's `replay` executable.
    CrateRoot {
        root: CLI_LIB,
        externs: &[("replay_core", CORE_LIB)],
    },
    CrateRoot {
        root: "crates/cli/src/main.rs",
        externs: &[("replay_core", CORE_LIB), ("replay_cli", CLI_LIB)],
    },
    CrateRoot {
        root: ROOT_LIB,
        externs: &[("replay_core", CORE_LIB), ("replay_cli", CLI_LIB)],
    },
    CrateRoot {
        root: "src/main.rs",
        externs: &[
            ("replay_core", CORE_LIB),
            ("replay_cli", CLI_LIB),
            ("replay", ROOT_LIB),
        ],
    },
    // replay-tracegen: the synthetic trace generator (a tool of its own, linking no core).
    CrateRoot {
        root: "crates/tracegen/src/lib.rs",
        externs: &[],
    },
    CrateRoot {
        root: "crates/tracegen/src/main.rs",
        externs: &[("replay_tracegen", "crates/tracegen/src/lib.rs")],
    },
    // The Python package's extension module (replay_kernels._native).
    CrateRoot {
        root: "crates/python/src/lib.rs",
        externs: &[("replay_core", CORE_LIB)],
    },
];

/// The most lines of non-test code one file may hold.
const MAX_LINES: usize = 600;

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Every `.rs` file under `dir` (relative to the workspace, with `/`).
fn rust_files(dir: &str, out: &mut BTreeMap<String, String>) {
    let full = workspace().join(dir);
    let Ok(entries) = std::fs::read_dir(&full) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{dir}/{name}");
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            let text = std::fs::read_to_string(entry.path()).expect("readable source");
            out.insert(path, text);
        }
    }
}

/// The sources of the crates: `src/` and every `crates/*/src`.
fn sources() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    rust_files("src", &mut out);
    let mut crates: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .expect("crates/")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    for krate in crates {
        rust_files(&format!("crates/{krate}/src"), &mut out);
    }
    assert!(
        out.contains_key(ROOT_LIB) && out.contains_key(CORE_LIB),
        "the sources were not found under {}",
        workspace().display()
    );
    out
}

fn read_tree(sources: &BTreeMap<String, String>) -> Tree {
    let tree = Tree::read(sources, CRATES);
    assert!(tree.problems.is_empty(), "{}", tree.problems.join("\n"));
    tree
}

fn cycle_report(edges: &Edges) -> Vec<String> {
    cycles(edges)
        .iter()
        .map(|c| format!("{}:{}", c.join(" <-> "), describe_cycle(edges, c)))
        .collect()
}

fn suite_violations(edges: &Edges) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in edges {
        for (to, why) in targets {
            if let (Some(a), Some(b)) = (suite_of(from), suite_of(to)) {
                if a != b {
                    out.push(format!("suite {a} imports suite {b}: {why}"));
                }
            }
        }
    }
    out
}

#[test]
fn no_file_imports_in_a_cycle() {
    let sources = sources();
    let edges = read_tree(&sources).edges();
    // The reading works: the graph has the edges every layer has.
    assert!(
        edges.len() > 100,
        "only {} files import anything",
        edges.len()
    );
    let found = cycle_report(&edges);
    assert!(
        found.is_empty(),
        "files that import each other (move what they share into the lower file or a file of \
         its own):\n{}",
        found.join("\n")
    );
}

/// Folder pairs that still import each other, each with why it is left (a redesign of its
/// own): (folder, folder, reason), the folders in sorted order.
const FOLDER_PAIRS_LEFT: &[(&str, &str, &str)] = &[];

#[test]
fn no_two_folders_import_each_other() {
    let sources = sources();
    let edges = read_tree(&sources).edges();
    let found = folder_pairs(&edges);
    let allowed = |a: &str, b: &str| FOLDER_PAIRS_LEFT.iter().any(|p| p.0 == a && p.1 == b);
    let report: Vec<String> = found
        .iter()
        .filter(|p| !allowed(&p.a, &p.b))
        .map(|p| p.describe())
        .collect();
    assert!(
        report.is_empty(),
        "folders that import each other (move what one needs from the other into it, or into a \
         lower module both may use):\n{}",
        report.join("\n")
    );
    let stale: Vec<String> = FOLDER_PAIRS_LEFT
        .iter()
        .filter(|(a, b, _)| !found.iter().any(|p| p.a == *a && p.b == *b))
        .map(|(a, b, _)| format!("{a} <-> {b}"))
        .collect();
    assert!(
        stale.is_empty(),
        "FOLDER_PAIRS_LEFT names pairs that no longer import each other (take them off): {stale:?}"
    );
}

#[test]
fn anyhow_and_clap_only_in_command_line_code() {
    let sources = sources();
    let tree = read_tree(&sources);
    let found = edge_errors::edge_crates_in_libraries(&tree, &sources, edge_errors::EDGE_CRATES);
    assert!(
        found.is_empty(),
        "library modules that name anyhow or clap (return the layer's typed error, `Error` in \
         its error.rs, and take options, not flags; anyhow and clap belong to the command \
         line: a binary's own modules and crates/cli):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_finds_anyhow_and_clap_outside_command_line_code() {
    let files: BTreeMap<String, String> = [
        ("src/lib.rs", "pub mod cli;\npub mod pipeline;\n"),
        (
            "src/cli/mod.rs",
            "pub fn run() -> anyhow::Result<()> { Ok(()) }\n",
        ),
        (
            "src/pipeline/mod.rs",
            "// anyhow in a comment is none\npub fn f() -> crate::Result<()> { Ok(()) }\n\
             pub fn g() -> anyhow::Result<()> { Ok(()) }\n#[cfg(test)]\nmod tests {\n    \
             fn t() -> anyhow::Result<()> { Ok(()) }\n}\n\
             #[derive(clap::ValueEnum)]\npub enum Mode { A }\n",
        ),
        (
            "src/main.rs",
            "fn main() -> anyhow::Result<()> { Ok(()) }\n",
        ),
    ]
    .iter()
    .map(|(p, t)| (p.to_string(), t.to_string()))
    .collect();
    let crates = [
        CrateRoot {
            root: ROOT_LIB,
            externs: &[],
        },
        CrateRoot {
            root: "src/main.rs",
            externs: &[],
        },
    ];
    let tree = Tree::read(&files, &crates);
    assert!(tree.problems.is_empty(), "{:?}", tree.problems);
    assert_eq!(
        edge_errors::edge_crates_in_libraries(&tree, &files, edge_errors::EDGE_CRATES),
        // A `cli/` folder inside a library is library code too (issue 52: clap and anyhow
        // only in the binaries' command line); `src/main.rs` is a binary's.
        [
            "src/cli/mod.rs:1",
            "src/pipeline/mod.rs:3",
            "src/pipeline/mod.rs:8"
        ]
    );
}

#[test]
fn no_suite_imports_another_suite() {
    let sources = sources();
    let edges = read_tree(&sources).edges();
    let found = suite_violations(&edges);
    assert!(
        found.is_empty(),
        "suites share code through a module outside src/suites, never each other:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_source_file_is_in_a_module_tree() {
    let sources = sources();
    let tree = read_tree(&sources);
    let read: std::collections::BTreeSet<&str> =
        tree.modules.iter().map(|m| m.file.as_str()).collect();
    let unread: Vec<&String> = sources
        .keys()
        .filter(|f| !read.contains(f.as_str()) && !tree.test_files.contains(*f))
        .collect();
    assert!(
        unread.is_empty(),
        "files that no crate declares (the graph would miss them): {unread:?}"
    );
}

#[test]
fn every_import_inside_the_workspace_is_understood() {
    let sources = sources();
    let unresolved = read_tree(&sources).unresolved();
    assert!(
        unresolved.is_empty(),
        "paths into the workspace that the reader cannot follow (teach `modules.rs` or \
         `graph.rs` the construct, or the graph misses these imports):\n{}",
        unresolved.join("\n")
    );
}

#[test]
fn no_source_file_over_600_lines_of_non_test_code() {
    let mut files = sources();
    let mut crates: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .expect("crates/")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    for krate in crates {
        rust_files(&format!("crates/{krate}/benches"), &mut files);
    }
    let tree = read_tree(&files);
    let over: Vec<String> = files
        .iter()
        .filter(|(path, _)| !tree.test_files.contains(*path))
        .map(|(path, text)| (path, tokens::non_test_lines(text)))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(path, lines)| format!("{path}: {lines} lines"))
        .collect();
    assert!(
        over.is_empty(),
        "files over {MAX_LINES} lines of non-test code (split them by concept):\n{}",
        over.join("\n")
    );
}

// The checker itself, on small made-up trees.

fn made_up(files: &[(&str, &str)]) -> Edges {
    let sources: BTreeMap<String, String> = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    let crates = [CrateRoot {
        root: ROOT_LIB,
        externs: &[],
    }];
    let tree = Tree::read(&sources, &crates);
    assert!(tree.problems.is_empty(), "{:?}", tree.problems);
    tree.edges()
}

#[test]
fn the_checker_finds_a_cycle_and_names_its_uses() {
    let edges = made_up(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
        ("src/b.rs", "pub struct B;\npub fn f() -> crate::c::C { todo!() }\n"),
        (
            "src/c.rs",
            "// use crate::b::B; is a comment\npub struct C;\npub fn g() { let _ = super::a::A(crate::b::B); }\n",
        ),
    ]);
    let found = cycle_report(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("src/a.rs <-> src/b.rs <-> src/c.rs"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("src/a.rs:1 `use crate::b::B`"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("src/b.rs:2 `crate::c::C`"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("src/c.rs:3 `super::a::A`"),
        "{}",
        found[0]
    );
}

#[test]
fn a_hub_that_only_re_exports_is_no_cycle_but_one_that_holds_code_is() {
    let hub = "mod inner;\nmod outer;\npub use inner::Inner;\npub use outer::Outer;\n";
    let files = [
        ("src/lib.rs", "pub mod hub;\n"),
        ("src/hub/mod.rs", hub),
        ("src/hub/inner.rs", "pub struct Inner;\n"),
        (
            "src/hub/outer.rs",
            "use super::Inner;\npub struct Outer(Inner);\n",
        ),
    ];
    let edges = made_up(&files);
    assert!(cycle_report(&edges).is_empty(), "{edges:?}");
    // The use through the hub leads to the file that defines the name.
    assert!(edges["src/hub/outer.rs"].contains_key("src/hub/inner.rs"));

    // A hub that defines what a submodule needs and uses the submodule is a real cycle.
    let hub = "mod outer;\npub struct Shared;\npub fn run() { outer::go() }\n";
    let edges = made_up(&[
        ("src/lib.rs", "pub mod hub;\n"),
        ("src/hub/mod.rs", hub),
        (
            "src/hub/outer.rs",
            "use super::Shared;\npub fn go() { let _ = Shared; }\n",
        ),
    ]);
    assert_eq!(cycle_report(&edges).len(), 1, "{edges:?}");
}

#[test]
fn test_code_and_glob_imports_are_read_as_the_rules_say() {
    let edges = made_up(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\n"),
        (
            "src/a.rs",
            "use crate::b::*;\npub struct A;\npub fn f() -> Used { todo!() }\n",
        ),
        (
            "src/b.rs",
            "pub struct Used;\npub struct Unused;\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n",
        ),
    ]);
    assert!(
        edges["src/a.rs"]["src/b.rs"].contains("(Used)"),
        "{edges:?}"
    );
    assert!(
        !edges.contains_key("src/b.rs"),
        "test code is no edge: {edges:?}"
    );
}

#[test]
fn folders_are_the_files_directories_and_top_level_files_are_their_own() {
    assert_eq!(
        folder_of("crates/core/src/predict/build/mod.rs"),
        "crates/core/src/predict/build"
    );
    assert_eq!(
        folder_of("crates/core/src/predict/report.rs"),
        "crates/core/src/predict"
    );
    assert_eq!(
        folder_of("crates/core/src/spill.rs"),
        "crates/core/src/spill"
    );
    assert_eq!(
        folder_of("crates/tracegen/src/event.rs"),
        "crates/tracegen/src/event"
    );
    assert_eq!(folder_of("src/error.rs"), "src/error");
    assert_eq!(folder_of("src/lib.rs"), "src/lib");
    assert_eq!(folder_of("src/pipeline/mod.rs"), "src/pipeline");
}

#[test]
fn the_checker_finds_two_folders_that_import_each_other() {
    // No file cycle: a/one -> b/two -> a/three, but folder a imports folder b and back.
    let files = [
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod spill;\n"),
        ("src/a/mod.rs", "pub mod one;\npub mod three;\n"),
        (
            "src/a/one.rs",
            "use crate::b::two::Two;\npub struct One(Two);\n",
        ),
        ("src/a/three.rs", "pub struct Three;\n"),
        ("src/b/mod.rs", "pub mod two;\n"),
        (
            "src/b/two.rs",
            "pub struct Two(crate::a::three::Three);\npub fn f() { crate::spill::g() }\n",
        ),
        (
            "src/spill.rs",
            "pub fn g() {}\npub fn h() -> crate::a::three::Three { todo!() }\n",
        ),
    ];
    let edges = made_up(&files);
    assert!(cycle_report(&edges).is_empty(), "{edges:?}");
    let found = folder_pairs(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    let text = found[0].describe();
    assert!(text.starts_with("src/a <-> src/b\n"), "{text}");
    assert!(
        text.contains("src/a/one.rs:1 `use crate::b::two::Two`"),
        "{text}"
    );
    assert!(
        text.contains("src/b/two.rs:1 `crate::a::three::Three`"),
        "{text}"
    );

    // A top-level file is a unit of its own: spill -> a, b -> spill is no pair until spill
    // also uses b.
    let mut files = files.to_vec();
    files[6].1 = "pub fn g() {}\npub fn h() -> crate::b::two::Two { todo!() }\n";
    let found = folder_pairs(&made_up(&files));
    let names: Vec<(&str, &str)> = found.iter().map(|p| (p.a.as_str(), p.b.as_str())).collect();
    assert_eq!(
        names,
        [("src/a", "src/b"), ("src/b", "src/spill")],
        "{found:?}"
    );

    // Through a re-exporting hub no pair: b names `crate::a::Three`, which `a/mod.rs` only
    // re-exports from `c/`.
    let edges = made_up(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        (
            "src/a/mod.rs",
            "pub mod one;\npub use crate::c::three::Three;\n",
        ),
        (
            "src/a/one.rs",
            "use crate::b::two::Two;\npub struct One(Two);\n",
        ),
        ("src/b/mod.rs", "pub mod two;\n"),
        ("src/b/two.rs", "pub struct Two(crate::a::Three);\n"),
        ("src/c/mod.rs", "pub mod three;\n"),
        ("src/c/three.rs", "pub struct Three;\n"),
    ]);
    assert!(folder_pairs(&edges).is_empty(), "{edges:?}");
}

#[test]
fn a_folder_and_its_subfolders_are_one_layer_but_a_subfolder_joins_its_folders_pairs() {
    // `a` calls into `a/deep`, which uses `a`'s type: a module and its parts, no pair.
    let mut files = vec![
        ("src/lib.rs", "pub mod a;\npub mod b;\n"),
        (
            "src/a/mod.rs",
            "pub mod deep;\npub mod three;\npub fn f() { deep::x::g() }\n",
        ),
        ("src/a/three.rs", "pub struct Three;\n"),
        ("src/a/deep/mod.rs", "pub mod x;\npub mod y;\n"),
        (
            "src/a/deep/x.rs",
            "pub fn g() { let _ = super::super::three::Three; }\n",
        ),
        ("src/a/deep/y.rs", "pub struct Y;\n"),
        ("src/b/mod.rs", "pub mod two;\n"),
        ("src/b/two.rs", "pub struct Two(crate::a::three::Three);\n"),
    ];
    let edges = made_up(&files);
    assert!(
        edges["src/a/deep/x.rs"].contains_key("src/a/three.rs"),
        "{edges:?}"
    );
    assert!(folder_pairs(&edges).is_empty(), "{edges:?}");

    // `a/deep` uses `b`, and `b` uses `a`: the pair is `a <-> b`, as the layers see it.
    files[5].1 = "pub struct Y(pub crate::b::two::Two);\n";
    let found = folder_pairs(&made_up(&files));
    assert_eq!(found.len(), 1, "{found:?}");
    let text = found[0].describe();
    assert!(text.starts_with("src/a <-> src/b\n"), "{text}");
    assert!(
        text.contains("src/a/deep/y.rs:1 `crate::b::two::Two`"),
        "{text}"
    );
}

#[test]
fn the_checker_finds_a_suite_importing_a_suite() {
    let edges = made_up(&[
        ("src/lib.rs", "pub mod suites;\npub mod math;\n"),
        ("src/math.rs", "pub fn exp(x: f32) -> f32 { x }\n"),
        ("src/suites/mod.rs", "pub mod mhc;\npub mod scan;\n"),
        (
            "src/suites/scan/mod.rs",
            "pub fn exp_approx(x: f32) -> f32 { crate::math::exp(x) }\n",
        ),
        (
            "src/suites/mhc/mod.rs",
            "use crate::suites::scan::exp_approx;\npub fn f() -> f32 { exp_approx(1.0) }\n",
        ),
    ]);
    let found = suite_violations(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("suite mhc imports suite scan"),
        "{}",
        found[0]
    );
}

#[test]
fn non_test_lines_leave_out_test_modules_wherever_they_are() {
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { let _ = \"}\"; }\n}\nfn b() {}\n";
    assert_eq!(tokens::non_test_lines(text), 2);
}

/// `cargo test --release -p replay-core --test source_layout -- --ignored --nocapture
/// print_import_graph` prints every edge (with `IMPORTS_OF=path/prefix`, only those from or to
/// matching files).
#[test]
#[ignore = "a tool: prints the import graph"]
fn print_import_graph() {
    let sources = sources();
    let tree = read_tree(&sources);
    let edges = tree.edges();
    for path in tree.unresolved() {
        println!("unresolved: {path}");
    }
    let filter = std::env::var("IMPORTS_OF").unwrap_or_default();
    for (from, targets) in &edges {
        for (to, why) in targets {
            if from.starts_with(&filter) || to.starts_with(&filter) {
                println!("{from} -> {to}  ({why})");
            }
        }
    }
}
