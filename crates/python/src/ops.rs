//! `Trace.ops()`: every CPU op (`cpu_op`) with its place in the op tree, its `nn.Module`,
//! and the shapes, dtypes, strides and values of its inputs as recorded (JSON text, as the
//! profiler wrote it with `record_shapes=True`).

use replay_core::signature::SignatureIds;
use replay_core::trace::link::Links;
use replay_core::trace::{Category, Trace};

use crate::columns::{Builder, Table};
use crate::kernels::{number, us};

/// The frame of every CPU op, in file order.
pub fn table(trace: &Trace, links: &Links, ids: &SignatureIds) -> Table {
    let mut event = Builder::ints("event");
    let mut name = Builder::strs("name");
    let mut ts = Builder::floats("ts");
    let mut dur = Builder::floats("dur");
    let mut pid = Builder::ints("pid");
    let mut tid = Builder::ints("tid");
    let mut external_id = Builder::ints("external_id");
    let mut sequence = Builder::ints("sequence_number");
    let mut record_function = Builder::ints("record_function_id");
    let mut parent = Builder::ints("parent_event");
    let mut depth = Builder::ints("depth");
    let mut module = Builder::strs("module");
    let mut input_dims = Builder::strs("input_dims");
    let mut input_types = Builder::strs("input_types");
    let mut input_strides = Builder::strs("input_strides");
    let mut concrete = Builder::strs("concrete_inputs");
    let mut signature = Builder::strs("signature");
    let text = |id: Option<replay_core::trace::StrId>| id.map(|id| trace.text(id));
    for (i, e) in trace.events.iter().enumerate() {
        if e.category != Category::CpuOp {
            continue;
        }
        event.uint(Some(i as u64));
        name.str(Some(trace.name(e)));
        ts.float(Some(us(e.ts_ns)));
        dur.float(Some(us(e.dur_ns)));
        pid.int(number(e.pid));
        tid.int(number(e.tid));
        external_id.int(e.args.external_id.map(|x| x.value));
        sequence.int(e.args.sequence_number);
        record_function.int(e.args.record_function_id);
        let up = links.op_parent.get(i).copied().flatten();
        parent.uint(up.map(|p| p as u64));
        depth.uint(Some(links.ancestors(i).len() as u64));
        let m = links.op_module.get(i).copied().flatten();
        module.str(m.and_then(|m| trace.events.get(m)).map(|m| {
            let n = trace.name(m);
            n.strip_prefix(replay_core::trace::MODULE_PREFIX)
                .unwrap_or(n)
        }));
        input_dims.str(text(e.args.inputs.dims));
        input_types.str(text(e.args.inputs.types));
        input_strides.str(text(e.args.inputs.strides));
        concrete.str(text(e.args.inputs.concrete));
        signature.str(ids.of_event(i));
    }
    Table::new(vec![
        event,
        name,
        ts,
        dur,
        pid,
        tid,
        external_id,
        sequence,
        record_function,
        parent,
        depth,
        module,
        input_dims,
        input_types,
        input_strides,
        concrete,
        signature,
    ])
}
