//! `Trace.kernels()`: every GPU activity (kernel, copy, memset) with the launch call and op it
//! was linked to ([`replay_core::trace::link`]) and the signature it was classified into.
//! Times are microseconds on the trace's own axis, as in the file (`ts`, `dur`: HTA's names).

use std::collections::HashMap;

use replay_core::signature::{SignatureFile, SignatureIds};
use replay_core::trace::link::Links;
use replay_core::trace::{ExecutionId, Trace};

use crate::columns::{Builder, Table};

/// Nanoseconds as microseconds.
pub fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// A pid or tid as a number (`None` for the profiler's labelled rows).
pub fn number(id: ExecutionId) -> Option<i64> {
    match id {
        ExecutionId::Number(n) => Some(n),
        ExecutionId::Label(_) => None,
    }
}

/// The op stack of `op`, outermost first, joined with " > ".
pub fn op_stack(trace: &Trace, links: &Links, op: usize) -> String {
    let mut names: Vec<&str> = links
        .ancestors(op)
        .into_iter()
        .filter_map(|i| trace.events.get(i))
        .map(|e| trace.name(e))
        .collect();
    if let Some(event) = trace.events.get(op) {
        names.push(trace.name(event));
    }
    names.join(" > ")
}

/// The frame of every GPU activity, in file order.
pub fn table(trace: &Trace, links: &Links, ids: &SignatureIds, file: &SignatureFile) -> Table {
    let tier_of: HashMap<&str, i64> = file
        .signatures
        .iter()
        .map(|s| (s.id.as_str(), i64::from(s.tier.number())))
        .collect();
    let mut event = Builder::ints("event");
    let mut name = Builder::strs("name");
    let mut cat = Builder::strs("cat");
    let mut ts = Builder::floats("ts");
    let mut dur = Builder::floats("dur");
    let mut pid = Builder::ints("pid");
    let mut device = Builder::ints("device");
    let mut stream = Builder::ints("stream");
    let mut correlation = Builder::ints("correlation");
    let mut bytes = Builder::ints("bytes");
    let mut grid = Builder::strs("grid");
    let mut block = Builder::strs("block");
    let mut launch = Builder::strs("launch");
    let mut launch_event = Builder::ints("launch_event");
    let mut op = Builder::strs("op");
    let mut op_event = Builder::ints("op_event");
    let mut stack = Builder::strs("op_stack");
    let mut signature = Builder::strs("signature");
    let mut tier = Builder::ints("tier");
    let mut graph = Builder::bools("launched_by_graph");
    let mut collective = Builder::bools("collective");
    let dims = |d: Option<[u32; 3]>| d.map(|[x, y, z]| format!("{x},{y},{z}"));
    for link in &links.activities {
        let Some(e) = trace.events.get(link.activity) else {
            continue;
        };
        event.uint(Some(link.activity as u64));
        name.str(Some(trace.name(e)));
        cat.str(Some(e.category.label()));
        ts.float(Some(us(e.ts_ns)));
        dur.float(Some(us(e.dur_ns)));
        pid.int(number(e.pid));
        device.int(e.args.device);
        stream.int(e.args.stream);
        correlation.int(e.args.correlation);
        bytes.uint(e.args.bytes);
        grid.str(dims(e.args.grid).as_deref());
        block.str(dims(e.args.block).as_deref());
        let launch_call = link.launch.and_then(|i| trace.events.get(i));
        launch.str(launch_call.map(|c| trace.name(c)));
        launch_event.uint(link.launch.map(|i| i as u64));
        let op_call = link.op.and_then(|i| trace.events.get(i));
        op.str(op_call.map(|o| trace.name(o)));
        op_event.uint(link.op.map(|i| i as u64));
        stack.str(link.op.map(|o| op_stack(trace, links, o)).as_deref());
        let id = ids.of_event(link.activity);
        signature.str(id);
        tier.int(id.and_then(|id| tier_of.get(id).copied()));
        graph.bool(Some(link.launched_by_graph));
        collective.bool(Some(link.collective));
    }
    Table::new(vec![
        event,
        name,
        cat,
        ts,
        dur,
        pid,
        device,
        stream,
        correlation,
        bytes,
        grid,
        block,
        launch,
        launch_event,
        op,
        op_event,
        stack,
        signature,
        tier,
        graph,
        collective,
    ])
}
