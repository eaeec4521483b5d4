//! `Trace.signatures()`: the table of `replay classify` — one row per signature of the
//! signature file, with its tier, kind, launching op, recorded shapes and dtypes, GEMM
//! dimensions and layout, count and trace time. The file itself is `Trace.signature_file()`.

use serde::Serialize;

use replay_core::signature::label::signature_label;
use replay_core::signature::SignatureFile;

use crate::columns::{Builder, Table};

/// A unit enum's name as the signature file spells it (`kernel`, `host_op`, `HtoD`).
pub fn serde_name<T: Serialize>(value: &T) -> Option<String> {
    match serde_json::to_value(value).ok()? {
        serde_json::Value::String(s) => Some(s),
        other => Some(other.to_string()),
    }
}

/// A recorded JSON value as text (`[[1, 5, 1024], []]`).
fn json_text(value: Option<&serde_json::Value>) -> Option<String> {
    value.map(|v| v.to_string())
}

/// The frame of every signature, in the file's order.
pub fn table(file: &SignatureFile) -> Table {
    let mut id = Builder::strs("id");
    let mut tier = Builder::ints("tier");
    let mut unit = Builder::strs("unit");
    let mut kind = Builder::strs("kind");
    let mut name = Builder::strs("name");
    let mut label = Builder::strs("label");
    let mut op = Builder::strs("op");
    let mut ancestry = Builder::strs("op_ancestry");
    let mut module = Builder::strs("module");
    let mut schema = Builder::strs("op_schema");
    let mut labels = Builder::strs("labels");
    let mut streams = Builder::strs("streams");
    let mut count = Builder::ints("count");
    let mut total = Builder::floats("trace_total_us");
    let mut mean = Builder::floats("trace_mean_us");
    let mut min = Builder::floats("trace_min_us");
    let mut max = Builder::floats("trace_max_us");
    let mut dims = Builder::strs("input_dims");
    let mut types = Builder::strs("input_types");
    let mut strides = Builder::strs("input_strides");
    let mut grid = Builder::strs("grid");
    let mut block = Builder::strs("block");
    let mut bytes = Builder::ints("bytes");
    let mut copy_kind = Builder::strs("memcpy_kind");
    let mut m = Builder::ints("gemm_m");
    let mut n = Builder::ints("gemm_n");
    let mut k = Builder::ints("gemm_k");
    let mut batch = Builder::ints("gemm_batch");
    let mut dtype = Builder::strs("gemm_dtype");
    let mut layout = Builder::strs("gemm_layout");
    let mut layout_source = Builder::strs("gemm_layout_source");
    let mut replayable = Builder::bools("replayable");
    let mut reason = Builder::strs("reason");
    let dim3 = |d: Option<[u32; 3]>| d.map(|[x, y, z]| format!("{x},{y},{z}"));
    for s in &file.signatures {
        id.str(Some(&s.id));
        tier.int(Some(i64::from(s.tier.number())));
        unit.str(serde_name(&s.unit).as_deref());
        kind.str(serde_name(&s.kind).as_deref());
        name.str(Some(&s.name));
        label.str(Some(&signature_label(s)));
        op.str(s.op.as_ref().map(|o| o.name.as_str()));
        ancestry.str(s.op.as_ref().map(|o| o.ancestry.join(" > ")).as_deref());
        module.str(s.op.as_ref().and_then(|o| o.module.as_deref()));
        schema.str(s.op.as_ref().and_then(|o| o.schema.as_deref()));
        let names: Vec<String> = s.labels.iter().filter_map(serde_name).collect();
        labels.str(Some(&names.join(",")));
        let ids: Vec<String> = s.streams.iter().map(i64::to_string).collect();
        streams.str(Some(&ids.join(",")));
        count.uint(Some(s.count));
        total.float(Some(s.trace_total_us));
        mean.float(Some(s.trace_mean_us));
        min.float(Some(s.trace_min_us));
        max.float(Some(s.trace_max_us));
        let inputs = s.inputs.as_ref();
        dims.str(json_text(inputs.and_then(|i| i.dims.as_ref())).as_deref());
        types.str(json_text(inputs.and_then(|i| i.types.as_ref())).as_deref());
        strides.str(json_text(inputs.and_then(|i| i.strides.as_ref())).as_deref());
        grid.str(dim3(s.grid).as_deref());
        block.str(dim3(s.block).as_deref());
        let size = s
            .memcpy
            .as_ref()
            .map(|c| c.bytes)
            .or(s.memset.as_ref().map(|c| c.bytes));
        bytes.uint(size);
        copy_kind.str(
            s.memcpy
                .as_ref()
                .and_then(|c| serde_name(&c.kind))
                .as_deref(),
        );
        let g = s.gemm.as_ref();
        m.uint(g.map(|g| g.m));
        n.uint(g.map(|g| g.n));
        k.uint(g.map(|g| g.k));
        batch.uint(g.map(|g| g.batch));
        dtype.str(g.map(|g| g.dtype_a.as_str()));
        let trans = |t: bool| if t { 'T' } else { 'N' };
        layout.str(
            g.map(|g| format!("{}{}", trans(g.trans_a), trans(g.trans_b)))
                .as_deref(),
        );
        layout_source.str(g.and_then(|g| serde_name(&g.layout_source)).as_deref());
        replayable.bool(Some(s.replayable));
        reason.str(s.reason.as_deref());
    }
    Table::new(vec![
        id,
        tier,
        unit,
        kind,
        name,
        label,
        op,
        ancestry,
        module,
        schema,
        labels,
        streams,
        count,
        total,
        mean,
        min,
        max,
        dims,
        types,
        strides,
        grid,
        block,
        bytes,
        copy_kind,
        m,
        n,
        k,
        batch,
        dtype,
        layout,
        layout_source,
        replayable,
        reason,
    ])
}
