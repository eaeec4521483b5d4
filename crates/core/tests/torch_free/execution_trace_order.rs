//! Execution Traces linked to Kineto traces that record no record-function ids, by op order
//! and shapes: PARAM's 2023 test pairs (`../shared/traces/et/`), bloom-tiny's pair with its
//! ids taken out (the ids say what the right links are), and pairs that do not belong
//! together, which are refused.

use std::path::{Path, PathBuf};

use replay_core::execution_trace::link::{self, EtLinks};
use replay_core::execution_trace::link_order::{link_by_order, MIN_MATCHED_SHARE};
use replay_core::execution_trace::{self, EtError, ExecutionTrace};
use replay_core::trace::{self, Trace};

use crate::common::repo_root;

fn shared_et(name: &str) -> PathBuf {
    repo_root().join("../shared/traces/et").join(name)
}

fn load_pair(et: &Path, kineto: &Path) -> (ExecutionTrace, Trace) {
    (
        execution_trace::load(et).unwrap_or_else(|e| panic!("{e}")),
        trace::load(kineto).unwrap_or_else(|e| panic!("{e}")),
    )
}

/// The Kineto event linked to the node of id `node_id`, by its `External id`.
fn external_id_of(links: &EtLinks, et: &ExecutionTrace, kineto: &Trace, node_id: i64) -> i64 {
    let (&event, _) = links
        .node_of_event
        .iter()
        .find(|(_, &n)| et.nodes[n].id == node_id)
        .unwrap_or_else(|| panic!("node {node_id} is linked"));
    kineto.events[event]
        .args
        .external_id
        .expect("an op with an external id")
        .value
}

#[test]
fn the_linear_pair_links_every_operator_to_the_last_iteration() {
    let (et_path, kineto_path) = (
        shared_et("linear_et.json.gz"),
        shared_et("linear_kineto.json.gz"),
    );
    let (et, kineto) = load_pair(&et_path, &kineto_path);
    let links = link::link(&et, &kineto, &kineto_path).unwrap_or_else(|e| panic!("{e}"));
    let order = links.by_order.clone().expect("linked by op order");
    // 710 operator nodes (931 nodes less the observer's, the optimizer's annotations and
    // autograd's wrappers), each an op of the Kineto trace's 40 identical iterations; with no
    // ProfilerStep the step is the profiled window, and the last iteration wins the tie.
    assert_eq!(order.step, "window");
    assert_eq!(
        (order.et_operators, order.matched, order.kineto_span_ops),
        (710, 710, 710)
    );
    assert_eq!((order.kineto_unmatched, order.shapes_compared), (0, 0));
    assert_eq!(
        order.places_tried, 840,
        "one per aten::linear of 40 iterations"
    );
    assert_eq!(
        (links.kineto_ops, links.kineto_ops_with_id, links.linked),
        (37078, 0, 710)
    );
    assert_eq!(links.node_of_event.len(), 710);
    // Checked by hand: the ET's first aten::linear (node 9, rf_id 1) and its addmm (node 14)
    // are the last iteration's first aten::linear (External id 35598, 821st of 840 by start
    // time) and the addmm under it (35602); the ET's last operator is a step of SGD.
    assert_eq!(
        et.nodes.iter().find(|n| n.id == 9).unwrap().name,
        "aten::linear"
    );
    assert_eq!(external_id_of(&links, &et, &kineto, 9), 35598);
    assert_eq!(external_id_of(&links, &et, &kineto, 14), 35602);
    for (&event, &node) in &links.node_of_event {
        assert_eq!(kineto.name(&kineto.events[event]), et.nodes[node].name);
    }
    assert!(
        links
            .describe()
            .starts_with("710 of 37078 ops linked by op order and shapes (the Kineto trace records no record-function id): in step window, 710 of the Execution Trace's 710 operators matched (0 not)"),
        "{}",
        links.describe()
    );
}

#[test]
fn the_resnet_pair_is_two_models_and_is_refused() {
    // The ET: a ResNet-50 under DDP, three steps (ProfilerStep#6-8, 159 aten::conv2d);
    // the Kineto trace: a ResNet-18 (20 aten::conv2d an iteration), another run.
    let (et_path, kineto_path) = (
        shared_et("resnet_et.json.gz"),
        shared_et("resnet_kineto.json.gz"),
    );
    let (et, kineto) = load_pair(&et_path, &kineto_path);
    let (_, order) = link_by_order(&et, &kineto);
    assert_eq!(order.et_operators, 10818);
    assert!(!order.trusted());
    assert!(
        (order.matched as f64) < 0.5 * order.et_operators as f64,
        "{order:?}"
    );
    let error = link::link(&et, &kineto, &kineto_path).unwrap_err();
    assert!(matches!(error, EtError::NotThisTrace { .. }));
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "{} does not belong to {}: none of the Kineto trace's 39506 ops records a \
             record-function id, and matched by op order and shapes (best of {} places) {} of \
             the Execution Trace's 10818 operators",
            et_path.display(),
            kineto_path.display(),
            order.places_tried,
            order.matched
        )),
        "{message}"
    );
    assert!(message.contains("at least 80 % of both must"), "{message}");
}

#[test]
fn a_shuffled_or_foreign_execution_trace_is_refused() {
    let kineto_path = shared_et("linear_kineto.json.gz");
    let (mut et, kineto) = load_pair(&shared_et("linear_et.json.gz"), &kineto_path);
    // The operators' record-function ids reversed: the same ops, in the opposite order.
    let mut operators: Vec<usize> = (0..et.nodes.len())
        .filter(|&n| et.nodes[n].op_schema.is_some())
        .collect();
    operators.sort_by_key(|&n| et.nodes[n].rf_id);
    let ids: Vec<Option<u64>> = operators.iter().map(|&n| et.nodes[n].rf_id).collect();
    for (&n, id) in operators.iter().zip(ids.into_iter().rev()) {
        et.nodes[n].rf_id = id;
    }
    let (_, order) = link_by_order(&et, &kineto);
    assert!(!order.trusted(), "{order:?}");
    let message = link::link(&et, &kineto, &kineto_path)
        .unwrap_err()
        .to_string();
    assert!(message.contains("does not belong to"), "{message}");
    // The linear ET beside the resnet Kineto trace: another model altogether.
    let resnet_path = shared_et("resnet_kineto.json.gz");
    let (et, resnet) = load_pair(&shared_et("linear_et.json.gz"), &resnet_path);
    let error = link::link(&et, &resnet, &resnet_path)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("linear_et.json.gz does not belong to"),
        "{error}"
    );
    assert!(error.contains("resnet_kineto.json.gz"), "{error}");
}

/// bloom-tiny's pair (`capture --execution-trace`, torch 2.11) records ids on both sides and
/// shapes on the Kineto side: with the ids taken out of the Kineto trace, linking by order
/// and shapes must find the links the ids give.
#[test]
fn order_and_shapes_find_the_links_record_function_ids_give() {
    let dir = repo_root().join("crates/core/tests/data/et");
    let (kineto_path, et_path) = (
        dir.join("bloom_tiny_cpu.json.gz"),
        dir.join("bloom_tiny_cpu.et.json.gz"),
    );
    let (et, kineto) = load_pair(&et_path, &kineto_path);
    let by_id = link::link(&et, &kineto, &kineto_path).unwrap_or_else(|e| panic!("{e}"));
    assert!(by_id.by_order.is_none());
    assert!(by_id
        .describe()
        .ends_with("ops linked by record-function id"));

    let bytes = std::fs::read(&kineto_path).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    for event in json["traceEvents"].as_array_mut().unwrap() {
        if let Some(args) = event.get_mut("args").and_then(|a| a.as_object_mut()) {
            args.remove("Record function id");
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let stripped_path = tmp.path().join("bloom_tiny_no_ids.json");
    std::fs::write(&stripped_path, json.to_string()).unwrap();
    let stripped = trace::load(&stripped_path).unwrap();
    let by_order = link::link(&et, &stripped, &stripped_path).unwrap_or_else(|e| panic!("{e}"));
    let order = by_order.by_order.clone().expect("linked by op order");
    assert_eq!(by_order.kineto_ops_with_id, 0);
    assert!(
        order.trusted() && order.matched as f64 >= MIN_MATCHED_SHARE * order.et_operators as f64
    );
    assert_eq!(
        order.shapes_compared, order.matched,
        "every bloom-tiny op records shapes"
    );
    // Every link the order makes is the ids' (the stripped trace keeps every event in its
    // place): all 356 operators; the ids link one node more, the step's ProfilerStep#1
    // annotation, which is no operator.
    let agree = by_order
        .node_of_event
        .iter()
        .filter(|(event, node)| by_id.node_of_event.get(event) == Some(node))
        .count();
    let id_operators = by_id
        .node_of_event
        .values()
        .filter(|&&n| et.nodes[n].op_schema.is_some())
        .count();
    assert_eq!(
        (
            agree,
            by_order.node_of_event.len(),
            id_operators,
            by_id.node_of_event.len()
        ),
        (356, 356, 356, 357),
        "{order:?}"
    );
    assert_eq!(
        (order.step.as_str(), order.kineto_unmatched),
        ("ProfilerStep#1", 0)
    );
}
