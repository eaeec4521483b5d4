//! Issue 31, part 0: on a CPU trace a composite GEMM op (`aten::matmul`, `aten::linear`) with a
//! strided operand is replayed whole through the dispatcher (tier 3), so the copies and folds
//! it makes around its GEMM are in the time; it keeps its GEMM's shape for the report. The
//! trace is a one-layer GPT-2 `replay capture` recorded on this CPU at seq-len 16.

use replay_core::signature::{self, Tier};
use replay_core::trace;

use crate::common;

#[test]
fn a_matmul_of_permuted_views_is_tier_3_with_its_gemm_shape_and_plain_linears_stay_tier_2() {
    let path = common::repo_root().join("tests/data/gpt2_1layer_cpu_seq16.json.gz");
    let trace = trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let file = signature::classify(&trace, &path);
    let strided_dims = |sig: &signature::Signature| {
        let inputs = sig.inputs.as_ref().expect("recorded inputs");
        let dims = inputs.dims.as_ref().unwrap().to_string();
        let strides = inputs.strides.as_ref().unwrap().to_string();
        (dims, strides)
    };
    // q @ k^T of the attention: [1,12,16,64] by [1,12,64,16] from the fused qkv projection.
    let qk = file
        .signatures
        .iter()
        .find(|s| s.name == "aten::matmul" && strided_dims(s).0 == "[[1,12,16,64],[1,12,64,16]]")
        .expect("the attention's q @ k^T matmul is a signature");
    assert_eq!(strided_dims(qk).1, "[[36864,64,2304,1],[36864,64,1,2304]]");
    assert_eq!(qk.tier, Tier::Op, "replayed whole through the dispatcher");
    assert!(qk.replayable, "{:?}", qk.reason);
    let gemm = qk
        .gemm
        .as_ref()
        .expect("the GEMM's shape is kept for the report");
    assert_eq!((gemm.batch, gemm.m, gemm.n, gemm.k), (12, 16, 16, 64));
    // Every composite GEMM op with only contiguous operands is still its GEMM (tier 2); every
    // one with a strided operand is tier 3. Both kinds are in this trace.
    let mut seen = (0, 0);
    for sig in file
        .signatures
        .iter()
        .filter(|s| s.name == "aten::matmul" || s.name == "aten::linear")
    {
        let (_, strides) = strided_dims(sig);
        let dims: Vec<Vec<i64>> = serde_json::from_str(&strided_dims(sig).0).unwrap();
        let strides: Vec<Vec<i64>> = serde_json::from_str(&strides).unwrap();
        let strided = dims.iter().zip(&strides).any(|(d, s)| {
            let mut expected = 1;
            d.iter().zip(s).rev().any(|(&size, &stride)| {
                let off = size > 1 && stride != expected;
                if size > 1 {
                    expected *= size;
                }
                off
            })
        });
        if sig.gemm.is_none() {
            continue;
        }
        if strided {
            assert_eq!(sig.tier, Tier::Op, "{} {:?}", sig.name, strided_dims(sig));
            seen.1 += 1;
        } else {
            assert_eq!(sig.tier, Tier::Gemm, "{} {:?}", sig.name, strided_dims(sig));
            seen.0 += 1;
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "{seen:?}");
}
