//! The memory of `replay sequence`: the plan made from the step's ops before anything is
//! allocated ([`replay_core::sequence_plan`]; with `--execution-trace`, following its tensors'
//! lifetimes, [`replay_core::sequence_liveness`]), checked against `--memory-budget` (default:
//! 80 % of the device's free memory), and the peak measured while the ops are built and run.

use std::path::Path;

use crate::device::Device;
use crate::replay::flow_wiring::nodes_of;
use crate::replay::registry::ReplayUnit;
use crate::replay::sequence::ProgramEntry;
use crate::replay::sequence_buffers::SequenceBuffers;
use crate::replay::sequence_needs::needs;
use crate::replay::sequence_route::Placing;
use crate::signature::schema::SignatureFile;
use replay_core::execution_trace::link::EtLinks;
use replay_core::execution_trace::ExecutionTrace;
use replay_core::memory_size::{available_bytes, size_text};
use replay_core::results::sequence::SequenceMemory;
use replay_core::sequence_gaps::gaps;
use replay_core::sequence_liveness::step_liveness;
use replay_core::sequence_plan::{largest_op, plan_flow, MemoryPlan, OpNeeds, PlanError};

use super::observer::Observer;

/// The share of the device's free memory the default budget takes.
pub const DEFAULT_BUDGET_SHARE: f64 = 0.8;

fn bad(what: &Path, message: String) -> crate::Error {
    crate::Error::from(replay_core::Error::BadInput {
        path: what.to_path_buf(),
        message,
    })
}

/// The device's free memory now: on the CPU the memory available (`MemAvailable`), on a GPU
/// the driver's free memory.
fn free_bytes(device: &Device) -> Option<u64> {
    match device {
        Device::Cpu(_) => available_bytes(),
        Device::Cuda(dev) => dev.free_memory().ok(),
    }
}

/// The planned step: its buffers, and what `sequence.json` records of the plan.
pub struct Planned {
    pub plan: MemoryPlan,
    pub buffers: SequenceBuffers,
    pub record: SequenceMemory,
}

/// Plans the memory of `entries` on `device` within `budget` (`--memory-budget`; `None`:
/// the default share of the free memory), and says so through `observer` before anything
/// is allocated. With `execution_trace`, the plan follows its tensors: an output lives from
/// its op to its last reader, a tensor from outside the step is one buffer. A budget given
/// below the largest op, a plan over the budget even with the most sharing, and shapes past
/// the address space are errors naming the flag or the trace (exit 2).
#[allow(clippy::too_many_arguments)]
pub fn plan_step(
    entries: &[ProgramEntry],
    file: &SignatureFile,
    units: &[ReplayUnit],
    placing: Placing,
    device: &Device,
    budget: Option<u64>,
    execution_trace: Option<(&ExecutionTrace, &EtLinks)>,
    trace: &Path,
    observer: &mut dyn Observer,
) -> crate::Result<Planned> {
    let mut ops: Vec<OpNeeds> = entries
        .iter()
        .map(|e| needs(e, file, units, placing))
        .collect();
    // The Execution Trace's lifetimes, where some op of the step linked to its node (sized as
    // without one otherwise), with the ops between that the step does not re-run.
    let flow = execution_trace
        .map(|(et, links)| (et, nodes_of(et, links, entries)))
        .filter(|(_, nodes)| nodes.iter().any(Option::is_some))
        .map(|(et, nodes)| step_liveness(&nodes, &gaps(et, &nodes)).annotate(&mut ops));
    let free = free_bytes(device);
    let (budget, budget_from) = match (budget, free) {
        (Some(b), _) => (b, "--memory-budget".to_owned()),
        (None, Some(free)) => (
            (free as f64 * DEFAULT_BUDGET_SHARE) as u64,
            format!(
                "{:.0} % of the device's free memory",
                DEFAULT_BUDGET_SHARE * 100.0
            ),
        ),
        (None, None) => (
            u64::MAX,
            "no limit (the free memory could not be read)".into(),
        ),
    };
    let flag = Path::new("--memory-budget");
    let name = |op: usize| {
        entries[op]
            .signatures
            .first()
            .and_then(|id| file.signatures.iter().find(|s| &s.id == id))
            .map_or_else(
                || "an op".to_owned(),
                // The op the user wrote (a GPU signature is named by its kernel).
                |s| {
                    s.op.as_ref()
                        .map_or_else(|| s.name.clone(), |o| o.name.clone())
                },
            )
    };
    if budget_from == "--memory-budget" {
        if let Some((op, bytes)) = largest_op(&ops).filter(|&(_, b)| b > budget) {
            return Err(bad(
                flag,
                format!(
                    "{} is below the largest op of the step: #{op} {} needs {} alone",
                    size_text(budget),
                    name(op),
                    size_text(bytes)
                ),
            ));
        }
    }
    let plan = match plan_flow(&ops, flow.as_ref(), budget) {
        Ok(plan) => plan,
        Err(e @ PlanError::OverBudget { .. }) => {
            return Err(bad(
                flag,
                format!("{e}; refused before allocating anything"),
            ))
        }
        Err(PlanError::AddressSpace { op, bytes }) => {
            let e = PlanError::AddressSpace { op, bytes };
            return Err(bad(trace, format!("{e} (#{op} {})", name(op))));
        }
    };
    let shared = plan.shared_requests();
    observer.info(&format!(
        "memory plan: peak {} of buffers (every op with inputs of its own: {}) against {} \
         free on {}, budget {} ({budget_from}); {} of {} requests share {} buffers: {}\n",
        size_text(plan.peak_bytes),
        size_text(plan.unshared_bytes),
        free.map_or("unknown".into(), size_text),
        device.spec(),
        size_text(budget),
        shared,
        plan.requests(),
        plan.shared_buffers(),
        plan.describe()
    ));
    if let Some(flow) = &plan.flow {
        observer.info(&format!(
            "memory plan, the Execution Trace's liveness: op outputs {} at most alive at once \
             (while #{} runs; {} if every output were kept), {} of {} storages read by a later \
             op; {} tensors from outside the step, one buffer each; {} flowing inputs' \
             stand-ins, {} external, {} by size\n",
            size_text(flow.live_peak_bytes),
            flow.live_peak_op,
            size_text(flow.outputs_bytes),
            flow.storages_read_later,
            flow.storages,
            flow.external_tensors,
            flow.flowing_requests,
            flow.external_requests,
            flow.sized_requests
        ));
    }
    if plan.sharing != replay_core::sequence_plan::Sharing::Activations {
        observer.warning(&format!(
            "the plan with each op's own parameters is over the budget of {}: running with more \
             sharing ({})",
            size_text(budget),
            plan.sharing.describe()
        ));
    }
    for o in &plan.oversized {
        observer.warning(&format!(
            "#{} {} needs {} alone, over the budget of {}: not run (oom), it enters with its \
             trace time",
            o.op,
            name(o.op),
            size_text(o.bytes),
            size_text(budget)
        ));
    }
    let buffers = SequenceBuffers::new(&plan, device);
    let record = SequenceMemory {
        planned_peak_bytes: plan.peak_bytes,
        budget_bytes: budget,
        budget_from,
        free_bytes: free,
        unshared_bytes: plan.unshared_bytes,
        sharing: plan.sharing,
        sharing_described: plan.describe(),
        buffers: plan.buffers.len(),
        shared_buffers: plan.shared_buffers(),
        shared_requests: shared,
        requests: plan.requests(),
        oversized: plan.oversized.clone(),
        unplanned_bytes: 0,
        measured_peak_bytes: None,
        measured_held_bytes: None,
        measured_build_peak_bytes: None,
        measured_run_peak_bytes: None,
        measured_by: String::new(),
        liveness: plan.flow.clone(),
    };
    Ok(Planned {
        plan,
        buffers,
        record,
    })
}

/// Starts measuring the peak on `device`: on the CPU, replay's counting allocator in front
/// of libtorch's CPU allocator (installed before the first buffer); on a GPU, the caching
/// allocator's peak, reset.
pub fn start_measuring(device: &Device) -> String {
    match device {
        Device::Cpu(_) => match crate::torch::cpu_memory_counter::install() {
            Ok(()) => {
                crate::torch::cpu_memory_counter::reset_peak();
                "libtorch's CPU tensors (buffers, host copies' byte buffers, outputs, \
                 workspaces), counted by replay's allocator in front of libtorch's; the \
                 process's own memory (code, the trace, libtorch's thread pools) not"
                    .into()
            }
            Err(e) => format!("not measured: {e}"),
        },
        Device::Cuda(dev) => match crate::torch::cuda_memory_stats::reset_peak(dev) {
            Ok(()) => "the CUDA caching allocator's peak allocated bytes".into(),
            Err(e) => format!("not measured: {e}"),
        },
    }
}

/// Once every op is built, before the first run: the peak of the build (each buffer made,
/// each op's first call) and the bytes held now (every buffer, private tensor and host-copy
/// buffer the rebuilt ops keep: what the plan's peak counts), as `(build peak, held)`; the
/// peak then starts again from what is held, for [`measured_peak`] to read the runs'.
pub fn after_build(device: &Device) -> (Option<u64>, Option<u64>) {
    match device {
        Device::Cpu(_) => {
            use crate::torch::cpu_memory_counter as counter;
            if !counter::is_installed() {
                return (None, None);
            }
            let built = (counter::peak_bytes(), counter::live_bytes());
            counter::reset_peak();
            (Some(built.0), Some(built.1))
        }
        Device::Cuda(dev) => {
            use crate::torch::cuda_memory_stats as stats;
            let build_peak = stats::peak(dev).ok().map(|(allocated, _)| allocated);
            // Reset, the peak is what the caching allocator holds now.
            let held = stats::reset_peak(dev)
                .and_then(|()| stats::peak(dev))
                .ok()
                .map(|(allocated, _)| allocated);
            (build_peak, held)
        }
    }
}

/// The peak since [`start_measuring`] or [`after_build`], where it measures.
pub fn measured_peak(device: &Device) -> Option<u64> {
    match device {
        Device::Cpu(_) => crate::torch::cpu_memory_counter::is_installed()
            .then(crate::torch::cpu_memory_counter::peak_bytes),
        Device::Cuda(dev) => crate::torch::cuda_memory_stats::peak(dev)
            .ok()
            .map(|(allocated, _)| allocated),
    }
}
