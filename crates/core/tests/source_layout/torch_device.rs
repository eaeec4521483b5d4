//! One device (issue 52 item 2): a command opens its `--device` once and hands the opened
//! `crate::device::Device` down; libtorch's device, stream and memory counters are accessors
//! of it (`Device::torch`, `crate::torch`). So `tch::Device` is named only in `src/device/` and
//! `src/torch/`: nowhere else is it written as a path (`tch::Device::Cuda(i)`) or imported
//! (`use tch::{Device, ...}`, under any alias), tests included (a test's host tensors go on
//! `Device::host().torch()` as the code's do). Files that still name it are in
//! [`NOT_YET`], printed on every run, and must leave the list once they no longer do, so the
//! list only shrinks.

use super::{sources, tokens};

/// Where libtorch's device type may be named.
const OWNERS: &[&str] = &["src/device/", "src/torch/"];

/// Files that still name `tch::Device`, and why.
const NOT_YET: &[(&str, &str)] = &[];

/// Each place `source` names libtorch's device type outside its comments and strings: a
/// `tch::Device` path, or `Device` in a `use tch::{...}` list. (line, what)
fn torch_device_uses(source: &str) -> Vec<(usize, &'static str)> {
    let tokens = tokens::tokenize(source);
    let mut uses = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if !t.is_ident("tch") || tokens.get(i + 1).map(|n| &n.tok) != Some(&tokens::Tok::PathSep) {
            continue;
        }
        match tokens.get(i + 2) {
            Some(n) if n.is_ident("Device") => uses.push((t.line, "tch::Device")),
            Some(n) if n.is_punct('{') => {
                let close = tokens::matching_close(&tokens, i + 2);
                let mut depth = 0;
                for inner in &tokens[i + 3..close.saturating_sub(1).max(i + 3)] {
                    if inner.is_punct('{') {
                        depth += 1;
                    } else if inner.is_punct('}') {
                        depth -= 1;
                    } else if depth == 0 && inner.is_ident("Device") {
                        uses.push((inner.line, "use tch::{Device}"));
                    }
                }
            }
            _ => {}
        }
    }
    uses
}

#[test]
fn only_the_device_and_torch_modules_name_libtorchs_device() {
    let mut outside = Vec::new();
    let mut clean_but_listed = Vec::new();
    for (path, text) in sources() {
        if OWNERS.iter().any(|owner| path.starts_with(owner)) {
            continue;
        }
        let uses = torch_device_uses(&text);
        let listed = NOT_YET.iter().find(|(file, _)| *file == path);
        match (uses.is_empty(), listed) {
            (true, Some(_)) => clean_but_listed.push(path),
            (true, None) => {}
            (false, Some((_, why))) => {
                println!("still names tch::Device: {path} ({why})");
            }
            (false, None) => outside.extend(
                uses.iter()
                    .map(|(line, what)| format!("{path}:{line}: {what}")),
            ),
        }
    }
    assert!(
        outside.is_empty(),
        "libtorch's device named outside src/device and src/torch (take the opened \
         crate::device::Device and ask it: device.torch(), Device::host() for the CPU):\n{}",
        outside.join("\n")
    );
    assert!(
        clean_but_listed.is_empty(),
        "no longer name tch::Device: take them off NOT_YET:\n{}",
        clean_but_listed.join("\n")
    );
}

#[test]
fn the_checker_finds_paths_and_imports_of_tchs_device_in_code_only() {
    let source = "use tch::{Device as TorchDevice, Kind};\nfn f() -> tch::Device {\n    \
                  // tch::Device in a comment\n    let _ = \"tch::Device\";\n    \
                  tch::Device::Cpu\n}\nuse tch::{nn::{Module}, Tensor};\n\
                  #[cfg(test)]\nmod tests {\n    use tch::Device;\n}\n";
    assert_eq!(
        torch_device_uses(source),
        [
            (1, "use tch::{Device}"),
            (2, "tch::Device"),
            (5, "tch::Device"),
            (10, "tch::Device")
        ]
    );
    // Our own device and tch's other items are not libtorch's device.
    assert!(torch_device_uses(
        "use crate::device::Device;\nuse tch::{Kind, Tensor};\nfn f(d: &Device) { d.torch(); }\n"
    )
    .is_empty());
}
