//! No bare GPU indices (issue 52 item 2): the opened GPU's ordinal, `CudaDevice`'s
//! `info.index`, is read only in `src/device/` and `src/torch/`, whose accessors hand it on:
//! `CudaDevice::torch` (libtorch's device), `CudaDevice::spec` (what labels print, `cuda:N`),
//! `CudaDevice::nvml_index` (NVML's number), `torch::work_target::libtorch_stream` and
//! `torch::current_cuda_stream` (libtorch's stream on it), `torch::shim_device_index` (the
//! shim's calls). Everywhere else takes the opened device and asks it: an index read out and
//! carried (`Placement::Gpu { gpu: usize }`) is how a device came to be opened twice. A file
//! that must still read it is in [`ALLOWED`] with its reason, printed on every run, and must
//! leave the list once it no longer does, so the list only shrinks.

use super::{sources, tokens};

/// Where the opened GPU's ordinal may be read.
const OWNERS: &[&str] = &["src/device/", "src/torch/"];

/// Files outside [`OWNERS`] that still read it, and why.
const ALLOWED: &[(&str, &str)] = &[];

/// The lines of `source` that read a device's `info.index`, outside comments and strings.
fn ordinal_reads(source: &str) -> Vec<usize> {
    tokens::tokenize(source)
        .windows(3)
        .filter(|w| w[0].is_ident("info") && w[1].is_punct('.') && w[2].is_ident("index"))
        .map(|w| w[0].line)
        .collect()
}

#[test]
fn only_the_device_and_torch_modules_read_a_gpus_ordinal() {
    let mut outside = Vec::new();
    let mut clean_but_allowed = Vec::new();
    for (path, text) in sources() {
        if OWNERS.iter().any(|owner| path.starts_with(owner)) {
            continue;
        }
        let reads = ordinal_reads(&text);
        match (
            reads.is_empty(),
            ALLOWED.iter().find(|(file, _)| *file == path),
        ) {
            (true, Some(_)) => clean_but_allowed.push(path),
            (true, None) => {}
            (false, Some((_, why))) => println!("still reads info.index: {path} ({why})"),
            (false, None) => outside.extend(
                reads
                    .iter()
                    .map(|line| format!("{path}:{line}: info.index")),
            ),
        }
    }
    assert!(
        outside.is_empty(),
        "a GPU's ordinal read outside src/device and src/torch (hand the opened device down \
         and ask it: dev.torch(), dev.spec() for a label, torch::work_target::libtorch_stream(dev), \
         torch::shim_device_index(device)):\n{}",
        outside.join("\n")
    );
    assert!(
        clean_but_allowed.is_empty(),
        "no longer read info.index: take them off ALLOWED:\n{}",
        clean_but_allowed.join("\n")
    );
}

#[test]
fn the_checker_finds_reads_of_the_ordinal_in_code_only() {
    let source = "fn f(dev: &CudaDevice) -> usize {\n    \
                  // dev.info.index in a comment\n    \
                  let _ = \"gpu.info.index\";\n    \
                  let a = dev.info.index;\n    \
                  let b = self.device.info\n        .index;\n    \
                  let c = d.index + info.index_of(x) + info.name.len();\n    \
                  a + b + c\n}\n";
    assert_eq!(ordinal_reads(source), [4, 5]);
}
