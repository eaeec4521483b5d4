//! Linking GPU activities to launch calls and ops on the real traces of every era, and
//! the labels that keep special activities from being mis-classified.

use std::path::PathBuf;

use replay_core::signature::{self, Label, SignatureFile, Tier, Unit, WorkKind};
use replay_core::trace::link::{self, ExternalIdCheck, Links};
use replay_core::trace::{self, Category, ExternalIdKey, Platform, Trace};

fn shared_traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kineto")
}

fn load(name: &str) -> (Trace, Links, SignatureFile) {
    let path = shared_traces().join(format!("{name}.json.gz"));
    let trace = trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let links = link::link(&trace);
    let file = signature::classify(&trace, &path);
    (trace, links, file)
}

#[test]
fn alexnet_links_by_correlation_where_the_external_id_points_at_the_wrong_op() {
    let (trace, links, _) = load("a100_alexnet_fwd");
    assert_eq!(links.stats.activities, 98);
    assert_eq!(
        links.stats.with_op, 98,
        "every GPU event is linked through its correlation id"
    );

    let mut misleading = 0;
    for activity in &links.activities {
        let ExternalIdCheck::Contradicted { external_id_op } = activity.external_id else {
            panic!("in this era the GPU-side External id is the correlation id, never the op's");
        };
        let launch = &trace.events[activity.launch.expect("launch call")];
        let op = &trace.events[activity.op.expect("op")];
        assert!(
            op.contains(launch),
            "the linked op encloses the launch call"
        );
        assert_eq!(op.pid, launch.pid);
        assert_eq!(op.tid, launch.tid);
        if let Some(wrong) = external_id_op {
            // An unrelated op happens to carry the same number as External id. Linking
            // by it would attribute this GPU work to an op that did not launch it: that
            // op does not even contain the launch call.
            let wrong = &trace.events[wrong];
            assert_ne!(wrong, op);
            assert!(
                !wrong.contains(launch),
                "External-id op contains the launch call"
            );
            misleading += 1;
        }
    }
    assert_eq!(
        misleading, 17,
        "17 of 98 GPU events have a misleading External id"
    );

    // The first one, concretely: the input copy is launched by aten::copy_, while the
    // External id (14, the correlation id) names an aten::detach.
    let first = links
        .activities
        .iter()
        .find(|a| {
            matches!(
                a.external_id,
                ExternalIdCheck::Contradicted {
                    external_id_op: Some(_)
                }
            )
        })
        .expect("a misleading External id");
    let ExternalIdCheck::Contradicted {
        external_id_op: Some(wrong),
    } = first.external_id
    else {
        unreachable!()
    };
    assert_eq!(
        trace.name(&trace.events[first.activity]),
        "Memcpy HtoD (Pageable -> Device)"
    );
    assert_eq!(
        trace.name(&trace.events[first.op.expect("op")]),
        "aten::copy_"
    );
    assert_eq!(trace.name(&trace.events[wrong]), "aten::detach");
}

#[test]
fn pytorch_1_9_trace_links_through_lowercase_external_id() {
    let (trace, links, file) = load("v100_resnet50_train_pt19");
    // Old category names and string tids ("stream 7", "25738") are read.
    assert!(
        trace.count_of(Category::CpuOp) > 20_000,
        "`Operator` events are ops"
    );
    assert!(
        trace.count_of(Category::CudaRuntime) > 10_000,
        "`Runtime` events are launch calls"
    );
    assert_eq!(links.stats.activities, 9096);
    assert_eq!(links.stats.with_op, 9096);
    for activity in &links.activities {
        let event = &trace.events[activity.activity];
        let external_id = event
            .args
            .external_id
            .expect("GPU events record an external id");
        assert_eq!(external_id.key, ExternalIdKey::Lowercase);
        assert_eq!(
            activity.external_id,
            ExternalIdCheck::Confirmed,
            "{}",
            trace.name(event)
        );
    }
    assert_eq!(file.source.linking.external_id_confirmed, 9096);
    // Memcpy/Memset/Kernel of the old spelling land in the right tiers.
    assert!(file
        .signatures
        .iter()
        .any(|s| s.tier == Tier::Copy && s.kind == WorkKind::Memset));
    assert!(file
        .signatures
        .iter()
        .any(|s| s.tier == Tier::Copy && s.kind == WorkKind::Memcpy));
    let gemms: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Gemm)
        .collect();
    assert_eq!(gemms.iter().map(|s| s.count).sum::<u64>(), 30);
    assert!(gemms.iter().all(|s| {
        s.op.as_ref()
            .is_some_and(|op| op.name == "aten::mm" || op.name == "aten::addmm")
    }));
    // cuDNN's volta_sgemm kernels under convolution ops are convolutions, not GEMMs.
    assert!(file
        .signatures
        .iter()
        .any(|s| s.tier == Tier::Op && s.name.starts_with("volta_sgemm")));
}

#[test]
fn modern_traces_confirm_the_external_id() {
    for name in ["h100_bert_small_infer", "h100_vit_infer", "a100_nccl_2rank"] {
        let (_, links, _) = load(name);
        assert_eq!(
            links.stats.external_id_confirmed, links.stats.activities,
            "{name}"
        );
        assert_eq!(links.stats.unattributed, 0, "{name}");
    }
}

#[test]
fn rocm_trace_is_read_and_labelled_rocm() {
    let (trace, links, file) = load("mi250_rocm_train");
    assert_eq!(trace.platform, Platform::Rocm);
    assert_eq!(file.source.platform, Platform::Rocm);
    assert_eq!(
        links.stats.with_op, 16,
        "hipLaunchKernel/hipMemcpyWithStream link like CUDA calls"
    );
    assert!(!file.signatures.is_empty());
    for s in &file.signatures {
        assert!(s.labels.contains(&Label::Rocm), "{}", s.name);
        assert!(
            !s.replayable,
            "{}: ROCm work is not replayed on CUDA",
            s.name
        );
    }
    // Tiered by what the work is, not dropped or lumped together: Tensile GEMMs are tier 2
    // with their shapes, and copies are tier 1 with the size from the hipMemcpy call.
    let gemms: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Gemm)
        .collect();
    assert_eq!(gemms.len(), 2);
    assert!(gemms
        .iter()
        .all(|s| s.name.starts_with("Cijk_") && s.gemm.is_some()));
    let copy = file
        .signatures
        .iter()
        .find(|s| s.kind == WorkKind::Memcpy)
        .expect("a copy");
    assert_eq!(copy.tier, Tier::Copy);
    assert!(copy.memcpy.is_some_and(|m| m.bytes > 0));
}

#[test]
fn cuda_graph_replays_and_collectives_are_labelled_not_dropped() {
    let (_, links, file) = load("a100_train_cudagraph_rank0");
    assert_eq!(links.stats.launched_by_graph, 345);
    let graph: u64 = file
        .signatures
        .iter()
        .filter(|s| s.labels.contains(&Label::Graph))
        .map(|s| s.count)
        .sum();
    assert_eq!(graph, 345);
    for s in file
        .signatures
        .iter()
        .filter(|s| s.labels.contains(&Label::Graph))
    {
        assert!(
            !s.replayable
                && s.reason
                    .as_deref()
                    .is_some_and(|r| r.contains("CUDA graph"))
        );
    }
    // 872 GPU events were launched before the profiling window: kept as unattributed.
    assert_eq!(file.summary.unattributed.invocations, 872);
    assert!(file.unattributed.iter().all(|u| !u.reason.is_empty()));
    // NCCL kernels, attributed or not, are labelled collective.
    let collective: u64 = file
        .signatures
        .iter()
        .filter(|s| s.labels.contains(&Label::Collective))
        .map(|s| s.count)
        .chain(
            file.unattributed
                .iter()
                .filter(|u| u.labels.contains(&Label::Collective))
                .map(|u| u.count),
        )
        .sum();
    assert_eq!(collective, 80);
    assert!(file
        .signatures
        .iter()
        .filter(|s| s.labels.contains(&Label::Collective))
        .all(|s| s.tier == Tier::Op));
}

#[test]
fn nccl_kernels_of_a_two_rank_job_are_collective() {
    let (_, links, file) = load("a100_nccl_2rank");
    assert_eq!(links.stats.collective, 21);
    let collective: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.labels.contains(&Label::Collective))
        .collect();
    assert_eq!(collective.iter().map(|s| s.count).sum::<u64>(), 21);
    assert!(collective
        .iter()
        .all(|s| s.name.contains("nccl") && !s.replayable));
    assert_eq!(
        file.source
            .distributed_info
            .as_ref()
            .and_then(|d| d.get("world_size"))
            .and_then(|w| w.as_i64()),
        Some(2)
    );
}

#[test]
fn triton_kernel_links_through_the_driver_api() {
    let (trace, links, file) = load("a100_triton_example");
    let activity = links.activities.first().expect("one kernel");
    let launch = &trace.events[activity.launch.expect("launch call")];
    assert_eq!(launch.category, Category::CudaDriver);
    assert_eq!(trace.name(launch), "cuLaunchKernel");
    let signature = file.signatures.first().expect("one signature");
    assert_eq!(signature.name, "triton_poi_fused_add_cos_sin_0");
    // A kernel Inductor generated is tier 4 (issue 30; it was tier 3 before).
    assert_eq!(signature.tier, Tier::Generated);
    assert_eq!(signature.grid, Some([1, 1, 1]));
    assert_eq!(signature.block, Some([128, 1, 1]));
}

#[test]
fn multistream_trace_folds_streams_into_one_signature() {
    let (_, _, file) = load("a100_multistream_sync");
    // cuda_sync events are not GPU work.
    assert_eq!(file.summary.total.invocations, 6);
    let gemm = file
        .signatures
        .iter()
        .find(|s| s.tier == Tier::Gemm)
        .expect("the sgemm");
    assert_eq!(gemm.count, 3);
    assert!(!gemm.replayable, "record_shapes was off: {:?}", gemm.reason);
}

#[test]
fn cpu_only_trace_uses_top_level_ops_and_reports_overhead() {
    let (trace, links, file) = load("cpu_only");
    assert_eq!(trace.platform, Platform::Cpu);
    assert_eq!(links.stats.activities, 0);
    assert_eq!(file.summary.unit, Unit::HostOp);
    // The four aten::empty calls are the only ops, all top-level: gloo:all_reduce ranges
    // are user annotations, not ops.
    assert_eq!(file.signatures.len(), 1);
    let empty = &file.signatures[0];
    assert_eq!(
        (empty.name.as_str(), empty.count, empty.unit, empty.tier),
        ("aten::empty", 4, Unit::HostOp, Tier::Op)
    );
    assert!((empty.trace_total_us - (2.503 + 0.473 + 0.401 + 0.587)).abs() < 1e-9);
    // Gaps: 896.721-891.813, 900.086-897.194, 903.310-900.487 (us past 1212076812000).
    let overhead = file.host_overhead.as_ref().expect("overhead reported");
    assert!(
        (overhead.overhead_us - (4.908 + 2.892 + 2.823)).abs() < 1e-9,
        "{overhead:?}"
    );
    assert_eq!(overhead.threads.len(), 1);
    assert!(file.summary_table().contains("overhead"));
}

#[test]
fn nested_ops_give_the_innermost_launching_op_with_its_ancestry_and_module() {
    let (_, _, file) = load("h100_bert_small_infer");
    let gemm = file
        .signatures
        .iter()
        .find(|s| s.tier == Tier::Gemm)
        .expect("a GEMM");
    let op = gemm.op.as_ref().expect("launching op");
    assert_eq!(op.name, "aten::addmm");
    assert_eq!(op.ancestry, vec!["aten::linear".to_owned()]);
    assert!(
        op.module
            .as_deref()
            .is_some_and(|m| m.starts_with("Linear_")),
        "{op:?}"
    );
}
