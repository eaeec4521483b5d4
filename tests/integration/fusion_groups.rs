//! TorchScript's fusion groups replayed (issue 51 part A), on this CPU with TorchScript's fuser
//! switched on: a t5-tiny exported by `replay export` and captured with `replay capture
//! --fuse-on-cpu` has `fused_*` ops (the same groups the H200 ran for t5-small); `isolated`
//! builds each group's NNC kernel from the subgraph the capture recorded and replays it, so the
//! step's coverage includes them. In process: a group's kernel built from its IR computes what
//! eager PyTorch computes, and what the unfused subgraph (the interpreter's reference) computes.

use crate::common;

use std::path::Path;

use common::replay;
use replay::replay::tier3_fusion_group::{check_against_unfused, tolerance};
use replay::torch::fusion_kernel::{reference_outputs, FusionKernel};
use tch::{Device, Kind, Tensor};

/// `replay isolated --trace trace` on one thread, briefly: its `isolated.json`.
fn isolated_of(trace: &Path, out: &Path) -> serde_json::Value {
    replay()
        .args(["isolated", "--device", "cpu", "--threads", "1"])
        .args(["--max-time", "0.01", "--rounds", "1", "--quiet", "--trace"])
        .arg(trace)
        .arg("--output-dir")
        .arg(out)
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success();
    read_json(&out.join("isolated.json"))
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_cpu_capture_with_the_fuser_on_replays_every_fusion_group() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("t5-tiny.pt");
    replay()
        .args(["export", "--model", "t5-tiny", "--out"])
        .arg(&model)
        .assert()
        .success();
    let trace = dir.path().join("t.json");
    let captured = replay()
        .args(["capture", "--model"])
        .arg(&model)
        .args(["--seq-len", "8", "--threads", "1", "--warmup", "2"])
        .args([
            "--candidates",
            "1",
            "--fuse-on-cpu",
            "--execution-trace",
            "--out",
        ])
        .arg(&trace)
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success();
    // `fusion groups: G in the optimised graph; A of E fused op(s) of the trace given their
    // inputs`: every fused event matched a group.
    let stdout = String::from_utf8_lossy(&captured.get_output().stdout).into_owned();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("fusion groups: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(numbers.len() >= 3 && numbers[0] > 0, "{line}");
    assert_eq!(numbers[1], numbers[2], "{line}");
    assert!(!line.contains("unmatched"), "{line}");
    let results = isolated_of(&trace, &dir.path().join("iso"));
    let rows = results["results"].as_array().unwrap();
    let fused: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with("fused_")))
        .collect();
    // t5's RMS norm (`fused_add_rsqrt_mul_to_mul`), its relative position buckets, ...
    assert!(fused.len() >= 3, "{fused:?}");
    assert!(fused
        .iter()
        .any(|r| r["name"] == "fused_add_rsqrt_mul_to_mul"));
    // Whether the groups ran in NNC's IR interpreter, as the venv's torch says of itself.
    let llvm = std::process::Command::new(common::venv_python())
        .args(["-c", "import torch; print(torch._C._llvm_enabled())"])
        .output()
        .unwrap();
    let llvm = String::from_utf8_lossy(&llvm.stdout).trim() == "True";
    assert_eq!(replay::torch::fusion_kernel::llvm_available(), llvm);
    for row in &fused {
        assert_eq!(row["status"], "ok", "{row}");
        let method = row["method"].as_str().unwrap();
        assert!(
            method.starts_with("TorchScript fusion group ")
                && method.contains("of the unfused subgraph"),
            "{method}"
        );
        assert_eq!(
            method.contains("in NNC's IR interpreter: this libtorch has no LLVM"),
            !llvm,
            "{method}"
        );
    }
    // Coverage: the fused groups held nearly all of this step (NNC's interpreter on a CPU
    // without LLVM is slow); with them replayed, everything is.
    let total: f64 = rows
        .iter()
        .map(|r| r["trace_total_us"].as_f64().unwrap())
        .sum();
    let replayed: f64 = rows
        .iter()
        .filter(|r| r["status"] == "ok" || r["status"] == "included")
        .map(|r| r["trace_total_us"].as_f64().unwrap())
        .sum();
    assert!(replayed >= 0.995 * total, "{replayed} of {total} us");

    // The step re-run with the model's data flow (its Execution Trace): the other ops go
    // through libtorch's dispatcher, which has no `fused_*` op; each group runs its own
    // kernel in its place.
    let seq = dir.path().join("seq");
    replay()
        .args(["sequence", "--device", "cpu", "--threads", "1", "--quiet"])
        .args(["--max-time", "0.2", "--min-samples", "3", "--trace"])
        .arg(&trace)
        .arg("--execution-trace")
        .arg(dir.path().join("t.et.json"))
        .arg("--output-dir")
        .arg(&seq)
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success();
    let rerun = read_json(&seq.join("sequence.json"));
    assert_eq!(rerun["data_flow"], true, "{}", rerun["flow"]);
    let entries = rerun["entries"].as_array().unwrap();
    let fused: Vec<&serde_json::Value> = entries
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("fused_")))
        .collect();
    assert!(fused.len() >= 3, "{entries:?}");
    for e in &fused {
        assert_eq!(e["status"], "ok", "{e}");
        let method = e["method"].as_str().unwrap();
        assert!(method.starts_with("TorchScript fusion group "), "{e}");
        assert!(e["in_context"]["median_us"].as_f64().unwrap() > 0.0, "{e}");
    }
}

/// bloom-tiny in bfloat16 captured with the CPU fuser on: TorchScript fuses no op that takes a
/// bfloat16 CPU tensor (without LLVM, as the pip wheels are built), so the GELU the H200 runs
/// as `fused_mul_mul_mul_mu_5065363705190979294` runs here as aten ops, and the capture says so
/// (before, it said nothing, as if every group a GPU forms were in the trace). The groups it
/// does form (the mask and the ALiBi slopes' cast to bfloat16, whose inputs are float32 and
/// int64) replay, and so does every other op.
#[test]
fn a_bfloat16_capture_with_the_cpu_fuser_says_which_chains_stay_unfused() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("bloom-tiny-bf16.pt");
    replay()
        .args([
            "export",
            "--model",
            "bloom-tiny",
            "--dtype",
            "bfloat16",
            "--out",
        ])
        .arg(&model)
        .assert()
        .success();
    let trace = dir.path().join("t.json");
    let captured = replay()
        .args(["capture", "--model"])
        .arg(&model)
        .args(["--seq-len", "8", "--threads", "1", "--warmup", "2"])
        .args(["--candidates", "1", "--fuse-on-cpu", "--out"])
        .arg(&trace)
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&captured.get_output().stdout).into_owned();
    assert!(
        stdout.contains("TorchScript's fuser does not fuse ops on bfloat16")
            && stdout.contains("run here as aten ops"),
        "{stdout}"
    );
    let document = read_json(&trace);
    let section = &document["replayFusionGroups"];
    assert_eq!(
        section["cpu_unfused_dtypes"],
        serde_json::json!(["bfloat16"]),
        "{section}"
    );
    let groups = section["groups"].as_array().unwrap();
    let names: Vec<&str> = groups.iter().filter_map(|g| g["name"].as_str()).collect();
    assert_eq!(names, ["fused_unsqueeze_gt_unsqueeze_to"], "{names:?}");
    for group in groups {
        for input in group["inputs"].as_array().unwrap() {
            assert_ne!(input["dtype"], "BFloat16", "{group}");
        }
    }
    // The GELU's ops are in the trace as themselves: two tanh per step, one a block.
    let events = document["traceEvents"].as_array().unwrap();
    let tanh = events
        .iter()
        .filter(|e| e["cat"] == "cpu_op" && e["name"] == "aten::tanh")
        .count();
    assert_eq!(tanh, 2);
    let results = isolated_of(&trace, &dir.path().join("iso"));
    let rows = results["results"].as_array().unwrap();
    let fused: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["name"] == "fused_unsqueeze_gt_unsqueeze_to")
        .collect();
    assert_eq!(fused.len(), 1, "{rows:?}");
    assert_eq!(fused[0]["status"], "ok", "{}", fused[0]);
    for row in rows {
        assert_eq!(row["status"], "ok", "{row}");
    }
}

/// A group as TorchScript's fuser writes one: `relu(x + y) * 2` on [2, 8, 8, 8] and a
/// broadcast [2, 1, 8, 8] slice (strides of a larger tensor).
const ADD_RELU_MUL: &str = "graph(%x : Float(2, 8, 8, 8, strides=[512, 64, 8, 1], requires_grad=0, device=cpu),
      %y : Float(2, 1, 8, 8, strides=[300, 100, 10, 1], requires_grad=0, device=cpu)):
  %two : int = prim::Constant[value=2]()
  %one : int = prim::Constant[value=1]()
  %s : Float(2, 8, 8, 8, strides=[512, 64, 8, 1], requires_grad=0, device=cpu) = aten::add(%x, %y, %one)
  %r : Float(2, 8, 8, 8, strides=[512, 64, 8, 1], requires_grad=0, device=cpu) = aten::relu(%s)
  %out : Float(2, 8, 8, 8, strides=[512, 64, 8, 1], requires_grad=0, device=cpu) = aten::mul(%r, %two)
  return (%out)
";

/// [`ADD_RELU_MUL`]'s inputs drawn from libtorch's generator seeded with `seed`: `x`, and
/// `y` as a [2, 1, 8, 8] slice of a larger tensor (its strides).
fn add_relu_mul_inputs(seed: i64) -> [Tensor; 2] {
    let _turn = common::torch_generator_turn();
    tch::manual_seed(seed);
    let x = Tensor::randn([2, 8, 8, 8], (Kind::Float, Device::Cpu));
    let base = Tensor::randn([2, 3, 10, 10], (Kind::Float, Device::Cpu));
    [
        x,
        base.slice(1, 0, 1, 1).slice(2, 1, 9, 1).slice(3, 1, 9, 1),
    ]
}

#[test]
fn a_group_s_kernel_computes_what_eager_pytorch_computes() {
    let [x, y] = add_relu_mul_inputs(51);
    assert_eq!(y.stride(), [300, 100, 10, 1]);
    let mut kernel = FusionKernel::new(ADD_RELU_MUL, Some(false)).unwrap();
    assert_eq!(kernel.name(), "fused_add_relu_mul");
    assert_eq!(kernel.inputs(), 2);
    let inputs = [x.shallow_clone(), y.shallow_clone()];
    kernel.run(&inputs, 3).unwrap();
    let fused = kernel.outputs();
    assert_eq!(fused.len(), 1);
    // Eager PyTorch, op by op, independently of TorchScript.
    let eager = (&x + &y).relu() * 2.0;
    let unfused = reference_outputs(ADD_RELU_MUL, &inputs).unwrap();
    // One rounding per op: the sum rounds once; relu and the doubling are exact.
    let bound = tolerance(Kind::Float, 3);
    for other in [&eager, &unfused[0]] {
        let diff = (&fused[0] - other).abs().max().double_value(&[]);
        let scale = other.abs().max().double_value(&[]).max(1.0);
        assert!(diff <= bound * scale, "{diff} > {bound} x {scale}");
    }
    let checked = check_against_unfused(&mut kernel, ADD_RELU_MUL, &inputs).unwrap();
    assert!(checked.largest <= checked.tolerance, "{checked:?}");
}

/// A group whose kernel does not compute its subgraph (here `relu(x + y) * 2` held to a
/// subgraph that triples) is refused, after the float64 subgraph is asked too: the unfused
/// float32 subgraph is within roundoff of it, the group is not.
#[test]
fn a_group_that_computes_another_subgraph_is_refused_against_float64() {
    let [x, y] = add_relu_mul_inputs(52);
    let mut kernel = FusionKernel::new(ADD_RELU_MUL, Some(false)).unwrap();
    let triples = ADD_RELU_MUL.replace("prim::Constant[value=2]", "prim::Constant[value=3]");
    let err = check_against_unfused(&mut kernel, &triples, &[x, y])
        .expect_err("a group that doubles is not a subgraph that triples")
        .to_string();
    assert!(
        err.contains("differs from the unfused subgraph")
            && err.contains("from the subgraph in float64, where the unfused one is"),
        "{err}"
    );
}

#[test]
fn a_subgraph_that_is_not_ir_is_refused_with_libtorch_s_words() {
    let err = FusionKernel::new("graph(%x : Float(2)):\n  return (%y)\n", Some(false))
        .err()
        .expect("not a valid graph");
    assert!(!err.0.is_empty());
}
