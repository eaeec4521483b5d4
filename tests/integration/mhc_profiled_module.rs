//! `--profiler` traces the seed's module as TorchScript (`scripts/mhc_model.py`); the trace is
//! only evidence about the benchmark if that module computes what the timed torch stages
//! compute. Here it is exported, its parameters are taken into the Rust stages, and both
//! run on the same input.

use crate::common;

use replay::suites::mhc::torch_stages::{self as torch, make_x_streams, MhcWeights};
use replay::suites::mhc::{MhcDtype, MhcShape};
use tch::Kind;

#[test]
fn the_profiled_module_computes_what_the_torch_stages_compute() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("mhc.pt");
    replay::model::python::run_script(
        "mhc_model.py",
        &[
            "--n-streams".into(),
            "4".into(),
            "--dim".into(),
            "48".into(),
            "--dtype".into(),
            "float32".into(),
            "--out".into(),
            model.display().to_string(),
        ],
    )
    .unwrap();
    let module = tch::CModule::load(&model).unwrap();
    let params: std::collections::HashMap<String, tch::Tensor> =
        module.named_parameters().unwrap().into_iter().collect();
    let weights = MhcWeights {
        norm_weight: params["norm.weight"].shallow_clone(),
        phi_res: params["phi_res.weight"].shallow_clone(),
        b_res: params["b_res"].shallow_clone(),
    };
    let shape = MhcShape::new(2, 7, 48, 4, MhcDtype::Float32).unwrap();
    let x = {
        let _turn = common::torch_generator_turn();
        make_x_streams(&shape, replay::device::Device::host()).unwrap()
    };
    let logits = torch::linear(&weights, &x, &shape).unwrap();
    let mix = torch::sinkhorn(&logits, &shape).unwrap();
    let ours = torch::apply(&mix, &x).unwrap();
    let theirs = tch::no_grad(|| module.forward_ts(&[&x])).unwrap();
    assert_eq!(theirs.size(), ours.size());
    let diff = (&theirs - &ours)
        .abs()
        .max()
        .to_kind(Kind::Double)
        .double_value(&[]);
    assert!(diff < 1e-5, "module and torch stages differ by {diff}");
}
