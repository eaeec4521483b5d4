//! Folding the GPU activities of a trace into unique signatures and sorting them into
//! tiers.
//!
//! A signature key is (kernel name, launching op, its `Input Dims`, `Input type`,
//! `Input Strides`, `Concrete Inputs`, grid, block): the same kernel launched by the same
//! op on the same inputs is the same work whichever stream ran it. Two refinements keep
//! every signature's replay parameters single-valued: copies and memsets also key on
//! their byte count, and kernels replayed from a CUDA graph are kept apart from the same
//! kernel launched directly (the former cannot be replayed from its op).

use std::fmt::Write as _;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::trace::link::{ActivityLink, Links};
use crate::trace::{
    Category, Dim3, FxHashMap, Platform, RecordedInputs, StrId, Trace, MODULE_PREFIX,
};

use super::call_site::CallSite;
use super::gemm::gemm_from_op;
use super::generated::{triton_kernel, NO_CACHE_REASON};
use super::kernel_kind::{
    blas_transposes_in_kernel_name, gemm_kernel_role, is_convolution_op, is_gemm_kernel,
};
use super::op_inputs::OpInputs;
use super::schema::{
    self, Label, LaunchingOp, MemcpyParams, MemsetParams, Signature, SignatureFile, Summary, Tier,
    TierSummary, Totals, UnattributedGroup, Unit, WorkKind,
};
use super::source::{compiled_code_in_steps, source};
use super::transfer::parse_memcpy_name;

/// What makes two GPU activities the same unit of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct GpuKey {
    pub(crate) name: StrId,
    pub(crate) op: Option<StrId>,
    pub(crate) inputs: RecordedInputs,
    pub(crate) grid: Option<Dim3>,
    pub(crate) block: Option<Dim3>,
    /// Copies and memsets only.
    pub(crate) bytes: Option<u64>,
    pub(crate) launched_by_graph: bool,
}

impl GpuKey {
    /// The key of one linked GPU activity. The one place a key is made, so that
    /// [`classify_gpu`] and [`super::ids`] give every activity the same signature id.
    pub(crate) fn of(trace: &Trace, link: &ActivityLink) -> GpuKey {
        let event = &trace.events[link.activity];
        let op = link.op.map(|op| &trace.events[op]);
        let is_kernel = event.category == Category::Kernel;
        GpuKey {
            name: event.name,
            op: op.map(|op| op.name),
            inputs: op.map(|op| op.args.inputs).unwrap_or_default(),
            grid: event.args.grid.filter(|_| is_kernel),
            block: event.args.block.filter(|_| is_kernel),
            bytes: if is_kernel {
                None
            } else {
                copy_bytes(trace, link)
            },
            launched_by_graph: link.launched_by_graph,
        }
    }
}

/// Running statistics of the invocations of one signature.
#[derive(Debug, Clone)]
pub(crate) struct Invocations {
    /// Event index of the first invocation, whose context describes the signature.
    pub first: usize,
    pub count: u64,
    pub total_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
    pub streams: Vec<i64>,
}

impl Invocations {
    pub fn new(first: usize) -> Self {
        Invocations {
            first,
            count: 0,
            total_ns: 0,
            min_ns: i64::MAX,
            max_ns: i64::MIN,
            streams: Vec::new(),
        }
    }

    pub fn add(&mut self, dur_ns: i64, stream: Option<i64>) {
        self.count += 1;
        self.total_ns = self.total_ns.saturating_add(dur_ns);
        self.min_ns = self.min_ns.min(dur_ns);
        self.max_ns = self.max_ns.max(dur_ns);
        match stream {
            Some(stream) if !self.streams.contains(&stream) => self.streams.push(stream),
            _ => {}
        }
    }
}

/// Microseconds from nanoseconds, for the file. Whole nanoseconds print with at most
/// three decimals, which every JSON reader parses back to the same `f64`.
pub(crate) fn us(nanos: i64) -> f64 {
    nanos as f64 / 1000.0
}

/// Sum of durations. Saturates: a damaged trace can hold durations of centuries, and
/// adding two of them must not overflow.
pub(crate) fn total_ns(durations: impl IntoIterator<Item = i64>) -> i64 {
    durations.into_iter().fold(0, i64::saturating_add)
}

/// Nanoseconds from microseconds written by [`us`].
pub(crate) fn ns(micros: f64) -> i64 {
    (micros * 1000.0).round() as i64
}

/// Mean of `count` invocations totalling `total_ns`, rounded to the nanosecond like
/// every other time in the file.
pub(crate) fn mean_us(total_ns: i64, count: u64) -> f64 {
    us((total_ns as f64 / count.max(1) as f64).round() as i64)
}

/// Classifies the GPU activities of a trace that has some.
pub(crate) fn classify_gpu(trace: &Trace, links: &Links, source_path: &Path) -> SignatureFile {
    let mut groups: FxHashMap<GpuKey, Invocations> = FxHashMap::default();
    let mut first_link: FxHashMap<GpuKey, ActivityLink> = FxHashMap::default();
    let mut unattributed: FxHashMap<(StrId, bool), Invocations> = FxHashMap::default();

    for link in &links.activities {
        let event = &trace.events[link.activity];
        if link.launch.is_none() {
            let has_correlation = event.args.correlation.is_some();
            unattributed
                .entry((event.name, has_correlation))
                .or_insert_with(|| Invocations::new(link.activity))
                .add(event.dur_ns, event.args.stream);
            continue;
        }
        let key = GpuKey::of(trace, link);
        groups
            .entry(key)
            .or_insert_with(|| {
                first_link.insert(key, *link);
                Invocations::new(link.activity)
            })
            .add(event.dur_ns, event.args.stream);
    }

    let folded = GpuGroups {
        groups,
        first_link,
        unattributed,
    };
    gpu_signature_file(
        trace,
        links,
        &folded,
        compiled_code_in_steps(trace),
        source_path,
    )
}

/// A trace's GPU activities folded by signature key: what its signature file is made from.
/// `first_link` holds the link of each key's first activity in file order (it describes
/// the signature); an unattributed group's `first` is its first activity.
pub(crate) struct GpuGroups {
    pub groups: FxHashMap<GpuKey, Invocations>,
    pub first_link: FxHashMap<GpuKey, ActivityLink>,
    pub unattributed: FxHashMap<(StrId, bool), Invocations>,
}

/// The signature file of folded GPU activities. `trace` and `links` need to hold only the
/// events the first links and unattributed groups point to (the streamed fold passes a
/// trace of just those), with the whole trace's strings, source, metadata and link counts.
pub(crate) fn gpu_signature_file(
    trace: &Trace,
    links: &Links,
    folded: &GpuGroups,
    compiled_code: Option<schema::CompiledCode>,
    source_path: &Path,
) -> SignatureFile {
    let GpuGroups {
        groups,
        first_link,
        unattributed,
    } = folded;
    let mut signatures: Vec<Signature> = groups
        .iter()
        .filter_map(|(key, invocations)| {
            let link = first_link.get(key)?;
            Some(gpu_signature(trace, links, key, link, invocations))
        })
        .collect();
    sort_signatures(&mut signatures);

    let mut unattributed_groups: Vec<UnattributedGroup> = unattributed
        .iter()
        .map(|(&(name, has_correlation), invocations)| {
            unattributed_group(trace, name, has_correlation, invocations)
        })
        .collect();
    unattributed_groups.sort_by(|a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| a.name.cmp(&b.name))
    });
    let unattributed_totals = Totals {
        invocations: unattributed.values().map(|i| i.count).sum(),
        total_us: us(total_ns(unattributed.values().map(|i| i.total_ns))),
    };

    SignatureFile {
        schema_version: schema::SCHEMA_VERSION,
        source: source(trace, links, source_path),
        summary: summarise(Unit::Kernel, &signatures, unattributed_totals),
        signatures,
        unattributed: unattributed_groups,
        host_overhead: None,
        compiled_code,
        ranks: Vec::new(),
    }
}

/// Tier 1 first, then the biggest time first; ids break ties so output is stable.
pub(crate) fn sort_signatures(signatures: &mut [Signature]) {
    signatures.sort_by(|a, b| {
        a.tier
            .cmp(&b.tier)
            .then_with(|| b.trace_total_us.total_cmp(&a.trace_total_us))
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// Per-tier totals, summed in whole nanoseconds so that they are exact.
pub(crate) fn summarise(unit: Unit, signatures: &[Signature], unattributed: Totals) -> Summary {
    // Tier 4 is listed only where there is some, so that the files of traces without
    // generated kernels stay as they were.
    let tiers: Vec<TierSummary> = Tier::ALL
        .iter()
        .filter(|&&tier| tier != Tier::Generated || signatures.iter().any(|s| s.tier == tier))
        .map(|&tier| {
            let of_tier = signatures.iter().filter(|s| s.tier == tier);
            TierSummary {
                tier,
                unique: of_tier.clone().count() as u64,
                invocations: of_tier.clone().map(|s| s.count).sum(),
                total_us: us(total_ns(of_tier.map(|s| ns(s.trace_total_us)))),
            }
        })
        .collect();
    let total = Totals {
        invocations: tiers.iter().map(|t| t.invocations).sum::<u64>() + unattributed.invocations,
        total_us: us(total_ns(
            tiers
                .iter()
                .map(|t| ns(t.total_us))
                .chain([ns(unattributed.total_us)]),
        )),
    };
    Summary {
        unit,
        tiers,
        unattributed,
        total,
    }
}

/// Bytes of a copy or memset: recorded on the GPU event, or (ROCm copies) on the launch
/// call as `size`.
fn copy_bytes(trace: &Trace, link: &ActivityLink) -> Option<u64> {
    trace.events[link.activity]
        .args
        .bytes
        .or_else(|| link.launch.and_then(|l| trace.events[l].args.bytes))
}

fn work_kind(category: Category) -> WorkKind {
    match category {
        Category::GpuMemcpy => WorkKind::Memcpy,
        Category::GpuMemset => WorkKind::Memset,
        _ => WorkKind::Kernel,
    }
}

/// The tier of a GPU activity: copies and memsets are tier 1; a kernel Inductor generated
/// (Triton) is tier 4; a GEMM kernel is tier 2 unless a convolution op launched it (then it
/// is cuDNN's, replayed through the op).
fn tier_of(category: Category, kernel_name: &str, op_name: Option<&str>) -> Tier {
    match category {
        Category::GpuMemcpy | Category::GpuMemset => Tier::Copy,
        _ if triton_kernel(kernel_name).is_some() => Tier::Generated,
        _ if is_gemm_kernel(kernel_name) && !op_name.is_some_and(is_convolution_op) => Tier::Gemm,
        _ => Tier::Op,
    }
}

fn gpu_signature(
    trace: &Trace,
    links: &Links,
    key: &GpuKey,
    link: &ActivityLink,
    invocations: &Invocations,
) -> Signature {
    let event = &trace.events[link.activity];
    let name = trace.text(key.name);
    let op_name = key.op.map(|op| trace.text(op));
    let kind = work_kind(event.category);
    let tier = tier_of(event.category, name, op_name);
    let launching = link.op.map(|op| launching_op(trace, links, op));
    // Inside compiled code an extern kernel's output buffer is recorded as an input (`out=`).
    let site = launching
        .as_ref()
        .map_or(CallSite::Eager, |op| CallSite::of_ancestry(&op.ancestry));
    let inputs = link
        .op
        .and_then(|op| parse_inputs(trace, &trace.events[op].args.inputs))
        .map(|inputs| inputs.at(site));

    let mut labels = Vec::new();
    if link.launched_by_graph {
        labels.push(Label::Graph);
    }
    if link.collective {
        labels.push(Label::Collective);
    }
    if trace.platform == Platform::Rocm {
        labels.push(Label::Rocm);
    }
    if link.op.is_none() {
        labels.push(Label::NoOp);
    }

    let mut blockers: Vec<String> = Vec::new();
    let mut memcpy = None;
    let mut memset = None;
    let mut gemm = None;
    let generated = if tier == Tier::Generated {
        triton_kernel(name)
    } else {
        None
    };
    if generated.is_some() {
        blockers.push(NO_CACHE_REASON.to_owned());
    }
    match kind {
        WorkKind::Memcpy => match (parse_memcpy_name(name), key.bytes) {
            (Some((direction, src, dst)), Some(bytes)) => {
                memcpy = Some(MemcpyParams {
                    kind: direction,
                    src,
                    dst,
                    bytes,
                })
            }
            (None, _) => blockers.push(format!("copy direction not recognised in {name:?}")),
            (_, None) => blockers.push("copy size not recorded".to_owned()),
        },
        WorkKind::Memset => match key.bytes {
            Some(bytes) => memset = Some(MemsetParams { bytes }),
            None => blockers.push("memset size not recorded".to_owned()),
        },
        WorkKind::Kernel | WorkKind::HostOp => {}
    }

    if tier == Tier::Gemm {
        match (op_name, &inputs) {
            (Some(op_name), Some(op_inputs)) => {
                let role = gemm_kernel_role(name);
                match gemm_from_op(
                    op_name,
                    op_inputs,
                    role,
                    blas_transposes_in_kernel_name(name),
                ) {
                    Ok(params) => gemm = Some(params),
                    Err(why) => blockers.push(format!("GEMM shape not derivable: {why}")),
                }
            }
            (Some(op_name), None) => blockers.push(format!(
                "GEMM shape not derivable: `{op_name}` has no recorded input shapes"
            )),
            (None, _) => {}
        }
    }
    if tier == Tier::Op && !link.launched_by_graph {
        match (&inputs, link.op) {
            (Some(op_inputs), _) => blockers.extend(op_inputs.unreplayable_reason()),
            (None, Some(_)) => {
                blockers.push("op inputs not recorded (record_shapes=False)".to_owned())
            }
            (None, None) => {}
        }
    }
    // Context that rules out any replay comes first: it is the reason a user can act on.
    let mut reasons: Vec<String> = Vec::new();
    if trace.platform == Platform::Rocm {
        reasons.push("captured on ROCm; replay targets CUDA".to_owned());
    }
    if link.launched_by_graph {
        reasons.push(
            "replayed from a CUDA graph (cudaGraphLaunch): per-kernel inputs are not recorded"
                .to_owned(),
        );
    }
    if link.collective {
        reasons.push("collective communication kernel: needs its peer ranks".to_owned());
    }
    if link.op.is_none() && tier != Tier::Copy {
        reasons.push("no cpu_op encloses the launch call".to_owned());
    }
    reasons.extend(blockers);

    Signature {
        id: signature_id(trace, key),
        tier,
        unit: Unit::Kernel,
        kind,
        name: name.to_owned(),
        op: launching,
        labels,
        streams: invocations.streams.clone(),
        count: invocations.count,
        trace_total_us: us(invocations.total_ns),
        trace_mean_us: mean_us(invocations.total_ns, invocations.count),
        trace_min_us: us(invocations.min_ns),
        trace_max_us: us(invocations.max_ns),
        inputs: recorded_inputs(trace, &key.inputs),
        grid: key.grid,
        block: key.block,
        replayable: reasons.is_empty(),
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        memcpy,
        memset,
        gemm,
        generated,
        fusion: None,
        ranks: Vec::new(),
    }
}

fn unattributed_group(
    trace: &Trace,
    name: StrId,
    has_correlation: bool,
    invocations: &Invocations,
) -> UnattributedGroup {
    let event = &trace.events[invocations.first];
    let name_text = trace.text(name);
    let mut labels = vec![Label::Unattributed];
    if crate::trace::link::is_collective_kernel(name_text) {
        labels.push(Label::Collective);
    }
    if trace.platform == Platform::Rocm {
        labels.push(Label::Rocm);
    }
    UnattributedGroup {
        name: name_text.to_owned(),
        kind: work_kind(event.category),
        tier: tier_of(event.category, name_text, None),
        labels,
        count: invocations.count,
        total_us: us(invocations.total_ns),
        reason: if has_correlation {
            "no launch call with the same correlation id in the trace (launched before the \
             profiling window, or from an untraced thread)"
                .to_owned()
        } else {
            "no correlation id recorded".to_owned()
        },
    }
}

/// The launching op with its ancestry and module.
pub(crate) fn launching_op(trace: &Trace, links: &Links, op: usize) -> LaunchingOp {
    let name = trace.name(&trace.events[op]).to_owned();
    let ancestors = links.ancestors(op);
    let ancestry = ancestors
        .iter()
        .map(|&a| trace.name(&trace.events[a]).to_owned())
        .collect();
    let ancestor_inputs = ancestors
        .iter()
        .map(|&a| recorded_inputs(trace, &trace.events[a].args.inputs))
        .collect();
    let module = links.op_module.get(op).copied().flatten().map(|m| {
        let full = trace.name(&trace.events[m]);
        full.strip_prefix(MODULE_PREFIX).unwrap_or(full).to_owned()
    });
    LaunchingOp {
        name,
        ancestry,
        module,
        ancestor_inputs,
        schema: None,
        exact_inputs: Vec::new(),
        input_ranges: Vec::new(),
    }
}

pub(crate) fn parse_inputs(trace: &Trace, inputs: &RecordedInputs) -> Option<OpInputs> {
    let text = |id: Option<StrId>| id.map(|id| trace.text(id));
    OpInputs::parse(
        text(inputs.dims),
        text(inputs.types),
        text(inputs.strides),
        text(inputs.concrete),
    )
}

/// The recorded input fields as JSON values, `None` when nothing was recorded.
pub(crate) fn recorded_inputs(
    trace: &Trace,
    inputs: &RecordedInputs,
) -> Option<schema::RecordedInputs> {
    if !inputs.is_recorded() {
        return None;
    }
    let value = |id: Option<StrId>| id.and_then(|id| serde_json::from_str(trace.text(id)).ok());
    Some(schema::RecordedInputs {
        dims: value(inputs.dims),
        types: value(inputs.types),
        strides: value(inputs.strides),
        concrete: value(inputs.concrete),
    })
}

/// A stable id: the first 16 hex digits of the SHA-256 of the key's text, so the same
/// work gets the same id in every trace it appears in.
pub(crate) fn signature_id(trace: &Trace, key: &GpuKey) -> String {
    let text = |id: Option<StrId>| id.map(|id| trace.text(id)).unwrap_or("");
    let mut canonical = String::new();
    let _ = write!(
        canonical,
        "kernel\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{:?}\u{1f}{:?}\u{1f}{:?}\u{1f}{}",
        trace.text(key.name),
        text(key.op),
        text(key.inputs.dims),
        text(key.inputs.types),
        text(key.inputs.strides),
        text(key.inputs.concrete),
        key.grid,
        key.block,
        key.bytes,
        key.launched_by_graph,
    );
    short_hash(&canonical)
}

pub(crate) fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest
        .iter()
        .take(8)
        .fold(String::with_capacity(16), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}
