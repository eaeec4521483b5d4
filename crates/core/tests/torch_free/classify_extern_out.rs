//! Inductor's output code calls its extern kernels with `out=` (`extern_kernels.mm(a, b,
//! out=buf)`), so the profiler records the output buffer as a trailing input. Inside a
//! compiled region that is the call's last argument, not a value TorchScript left on its stack
//! before the arguments: read that way, bloom-tiny's `mm` multiplied [64,1000] by [5,1000].
//! Real captures of bloom-tiny compiled on this CPU and on an H200 (2026-11-26).

use std::path::{Path, PathBuf};

use replay_core::signature::label::signature_label;
use replay_core::signature::{self, SignatureFile, Tier};
use replay_core::trace;

use crate::common;

fn classify(path: &Path) -> SignatureFile {
    let trace = trace::load(path).unwrap_or_else(|e| panic!("{e}"));
    signature::classify(&trace, path)
}

fn compiled_data(name: &str) -> PathBuf {
    common::repo_root()
        .join("crates/core/tests/data/compiled")
        .join(name)
}

#[test]
fn a_compiled_graphs_extern_mm_on_the_cpu_is_the_gemm_it_computed() {
    let file = classify(&compiled_data("cpu_bloom_tiny_compiled.json.gz"));
    let mm: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.name == "aten::mm" || s.name == "aten::bmm")
        .collect();
    assert_eq!(
        mm.len(),
        2,
        "{:?}",
        file.signatures.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    for sig in mm {
        assert_eq!(sig.tier, Tier::Gemm, "{} {:?}", sig.name, sig.reason);
        let g = sig.gemm.as_ref().expect("GEMM parameters");
        match sig.name.as_str() {
            // [5,64] x [64,1000] (the tied embedding, transposed) into [5,1000].
            "aten::mm" => assert_eq!((g.m, g.n, g.k, g.batch), (5, 1000, 64, 1)),
            // [4,5,5] x [4,5,16] into [4,5,16]: attention probabilities times values.
            _ => assert_eq!((g.m, g.n, g.k, g.batch), (5, 16, 5, 4)),
        }
        // The label starts from the call's first argument (the stack-value reading dropped it).
        let label = signature_label(sig);
        let first = if sig.name == "aten::mm" {
            "aten::mm [5,64]×[64,1000]"
        } else {
            "aten::bmm [4,5,5]×[4,5,16]"
        };
        assert!(label.starts_with(first), "{label}");
    }
}

#[test]
fn a_compiled_graphs_extern_gemms_on_an_h200_keep_their_shapes() {
    let file = classify(&compiled_data("h200_bloom_tiny/trace.json"));
    let from_mm: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.op.as_ref().is_some_and(|op| op.name == "aten::mm"))
        .collect();
    assert!(!from_mm.is_empty());
    for sig in &from_mm {
        assert_eq!(sig.tier, Tier::Gemm, "{}: {:?}", sig.name, sig.reason);
        let g = sig
            .gemm
            .as_ref()
            .unwrap_or_else(|| panic!("{}: {:?}", sig.name, sig.reason));
        assert_eq!(g.batch, 1);
        // Every mm of the graph multiplies the 5 (or 8, padded) token rows by a weight.
        assert!(g.m == 5 || g.m == 8 || g.n == 5 || g.n == 8, "{g:?}");
    }
    // The logits' GEMM: k = 64 (the hidden size), 1000 outputs (the vocabulary).
    assert!(
        from_mm
            .iter()
            .filter_map(|s| s.gemm.as_ref())
            .any(|g| g.k == 64 && (g.m == 1000 || g.n == 1000)),
        "{:?}",
        from_mm.iter().map(|s| s.gemm.as_ref()).collect::<Vec<_>>()
    );
}
