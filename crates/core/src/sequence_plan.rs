//! The memory plan of a re-run step (`replay sequence`), made before anything is allocated.
//!
//! Every op instance of the step needs tensors of its own shapes, dtypes and strides; their
//! values only matter where an op reads them as indices or counts. Allocating each instance's
//! inputs once, side by side, makes the step's footprint the sum of every op's inputs, far
//! above the model's working set. The plan shares storage as the model's allocator reuses
//! freed blocks: the step runs its ops one after the other, so an input is needed only while
//! its op runs, and once that op has run its buffer serves a later op's input of the same
//! size and dtype. Within one op no two inputs share a buffer (each op still reads distinct
//! tensors of the right shapes). Parameters (weights) are the model's: one buffer per op
//! instance's parameter, as the model holds every layer's weights. Inputs whose values matter
//! (indices, counts, recorded value ranges) are private.
//!
//! A plan over the budget is made again with more sharing ([`Sharing::ParametersToo`]:
//! parameters of one size and dtype share a buffer across ops too, which keeps in cache
//! weights the model streams from memory); an op that alone needs more than the budget is
//! left out of the plan (it enters the step as `oom` with its trace time).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most bytes a plan may hold: x86-64's and AArch64's 47-bit user address space. Shapes
/// that imply more are refused before anything is allocated.
pub const ADDRESS_SPACE: u64 = 1 << 47;

/// What a tensor an op needs is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An activation: any values of the right dtype will do, shared across ops.
    Activation,
    /// A parameter (weight, bias, running statistic): the op instance's own.
    Parameter,
    /// Values that matter (indices, counts, recorded ranges) or memory that is not a tensor
    /// (a host copy's buffers): the op's own, never shared.
    Private,
}

/// Where a request's tensor comes from when the step's data flow is known (an Execution
/// Trace: [`crate::sequence_liveness`]); without one every request is [`Source::Sized`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Source {
    /// Shared by the size-and-dtype rule of the plan's [`Sharing`].
    #[default]
    Sized,
    /// An earlier op's output flows into it: its buffer only stands in until the input is
    /// linked to that output (no run reads it), so stand-ins of one size and dtype share a
    /// buffer across ops whatever their role.
    Flowing,
    /// The tensor of this identity from outside the step (a parameter, the model's input):
    /// one buffer serves every request of it, in every op that reads it.
    External(u64),
}

/// Which recorded input of its op a request is: its position, and the element of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InputSlot {
    pub input: usize,
    pub element: Option<usize>,
}

/// One tensor (or buffer) an op needs: its storage's bytes and dtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub bytes: u64,
    /// The dtype's name (`float32`, `bfloat16`, `int64`, ...): storage is shared only
    /// between tensors of one dtype, so that each reads values of its own kind.
    pub dtype: String,
    pub role: Role,
    /// The op's recorded input it is, where known (what an Execution Trace's node names).
    pub input: Option<InputSlot>,
    pub source: Source,
}

impl Request {
    pub fn new(bytes: u64, dtype: &str, role: Role) -> Request {
        Request {
            bytes,
            dtype: dtype.to_owned(),
            role,
            input: None,
            source: Source::Sized,
        }
    }

    /// The same request, said to be recorded input `input` (element `element` of a list).
    pub fn of_input(mut self, input: usize, element: Option<usize>) -> Request {
        self.input = Some(InputSlot { input, element });
        self
    }
}

/// What one op instance of the step needs, in the order its replayer asks for it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpNeeds {
    pub requests: Vec<Request>,
}

impl OpNeeds {
    /// The op's bytes alone (`None` past 2^64).
    pub fn bytes(&self) -> Option<u64> {
        self.requests
            .iter()
            .try_fold(0u64, |sum, r| sum.checked_add(r.bytes))
    }
}

/// How much the plan shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    /// Activations of one size and dtype share a buffer once their op has run; parameters
    /// are each op instance's own.
    Activations,
    /// Parameters of one size and dtype share a buffer across ops too.
    ParametersToo,
}

impl Sharing {
    /// What is shared, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Sharing::Activations => {
                "inputs of one size and dtype share storage once their op has run; \
                 parameters are each op's own"
            }
            Sharing::ParametersToo => {
                "inputs and parameters of one size and dtype share storage across ops \
                 (weights the model streams from memory may stay in cache)"
            }
        }
    }
}

/// One buffer of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffer {
    pub bytes: u64,
    pub dtype: String,
    pub role: Role,
    /// How many requests it serves (2 or more: shared).
    pub users: usize,
}

/// An op left out of the plan: it alone needs more than the budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Oversized {
    /// Its position in the step.
    pub op: usize,
    pub bytes: u64,
}

/// What the data flow of an Execution Trace adds to a plan ([`crate::sequence_liveness`]):
/// the storages the ops' outputs hold from the op that makes them to their last reader, and
/// the one allocation of external tensors that view one storage at different offsets.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowMemory {
    /// The most bytes of op outputs alive at once, and the op (position) where they are.
    pub live_peak_bytes: u64,
    pub live_peak_op: usize,
    /// Every output storage of the step's ops, as if each were kept for the whole step.
    pub outputs_bytes: u64,
    /// Storages the step's ops make, and those a later op reads.
    pub storages: usize,
    pub storages_read_later: usize,
    /// Tensors from outside the step (one buffer each, however many ops read them).
    pub external_tensors: usize,
    /// External storages viewed at different offsets by several tensors, allocated once.
    pub aliased_storage_bytes: u64,
    /// Requests by source: stand-ins for flowing inputs, external tensors, by size.
    pub flowing_requests: usize,
    pub external_requests: usize,
    pub sized_requests: usize,
}

/// The plan: which buffer serves each request of each op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPlan {
    pub sharing: Sharing,
    pub budget: u64,
    pub buffers: Vec<Buffer>,
    /// Per op, per request: its buffer; empty for an oversized op.
    pub assignment: Vec<Vec<usize>>,
    /// The bytes of every buffer: what the rebuilt ops hold at once; with an Execution
    /// Trace's data flow, plus its [`FlowMemory`]'s aliased storages and live outputs.
    pub peak_bytes: u64,
    /// The data flow's part, when an Execution Trace gave it.
    pub flow: Option<FlowMemory>,
    /// The sum of every op's requests: each op with inputs of its own (the footprint
    /// without a plan), oversized ops included.
    pub unshared_bytes: u64,
    pub oversized: Vec<Oversized>,
}

impl MemoryPlan {
    /// Requests served by a buffer that serves another request too.
    pub fn shared_requests(&self) -> usize {
        self.buffers
            .iter()
            .filter(|b| b.users > 1)
            .map(|b| b.users)
            .sum()
    }

    /// Buffers serving two requests or more.
    pub fn shared_buffers(&self) -> usize {
        self.buffers.iter().filter(|b| b.users > 1).count()
    }

    /// Requests served in all.
    pub fn requests(&self) -> usize {
        self.buffers.iter().map(|b| b.users).sum()
    }

    /// What the plan shares, for messages.
    pub fn describe(&self) -> String {
        match &self.flow {
            None => self.sharing.describe().to_owned(),
            Some(_) => format!(
                "the Execution Trace's liveness: an output lives from its op to its last reader, \
                 a tensor from outside the step is one buffer for all its readers, flowing \
                 inputs' stand-ins share by size and dtype; other inputs: {}",
                self.sharing.describe()
            ),
        }
    }
}

/// Why a step cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Even with the most sharing, the plan needs more than the budget.
    #[error(
        "the step's planned peak is {} with the most sharing ({}), over the memory budget of {}",
        crate::memory_size::size_text(*peak),
        sharing.describe(),
        crate::memory_size::size_text(*budget)
    )]
    OverBudget {
        peak: u64,
        budget: u64,
        sharing: Sharing,
    },
    /// An op's shapes imply more than the address space.
    #[error(
        "op {op}'s inputs need {}, more than the address space ({}): not allocated",
        bytes.map_or("more than 2^64 bytes".to_owned(), crate::memory_size::size_text),
        crate::memory_size::size_text(ADDRESS_SPACE)
    )]
    AddressSpace { op: usize, bytes: Option<u64> },
}

/// The plan of `ops` with `sharing`: ops that alone need more than `budget` are left out;
/// every other op's requests get buffers, greedily in step order (a request takes a free
/// buffer of its size, dtype and sharing class that this op does not use yet, else a new one).
pub fn plan_with(ops: &[OpNeeds], sharing: Sharing, budget: u64) -> Result<MemoryPlan, PlanError> {
    plan_flow_with(ops, None, sharing, budget)
}

/// [`plan_with`], the requests' [`Source`]s followed (a flowing input's stand-in shares by
/// size and dtype whatever its role; an external tensor's requests share its one buffer),
/// and `flow`'s memory added to the peak.
pub fn plan_flow_with(
    ops: &[OpNeeds],
    flow: Option<&FlowMemory>,
    sharing: Sharing,
    budget: u64,
) -> Result<MemoryPlan, PlanError> {
    let mut buffers: Vec<Buffer> = Vec::new();
    // Shareable buffers by (role, bytes, dtype).
    let mut pools: BTreeMap<(Role, u64, &str), Vec<usize>> = BTreeMap::new();
    // External tensors' buffers by (identity, role, bytes, dtype).
    let mut identities: BTreeMap<(u64, Role, u64, &str), usize> = BTreeMap::new();
    let mut assignment = Vec::with_capacity(ops.len());
    let mut oversized = Vec::new();
    let mut unshared: u64 = 0;
    for (op, needs) in ops.iter().enumerate() {
        let bytes =
            needs
                .bytes()
                .filter(|&b| b <= ADDRESS_SPACE)
                .ok_or(PlanError::AddressSpace {
                    op,
                    bytes: needs.bytes(),
                })?;
        unshared = unshared.saturating_add(bytes);
        if bytes > budget {
            oversized.push(Oversized { op, bytes });
            assignment.push(Vec::new());
            continue;
        }
        let mut mine: Vec<usize> = Vec::with_capacity(needs.requests.len());
        for request in &needs.requests {
            let dtype = request.dtype.as_str();
            if let Source::External(id) = request.source {
                let key = (id, request.role, request.bytes, dtype);
                let buffer = *identities.entry(key).or_insert_with(|| {
                    buffers.push(Buffer {
                        bytes: request.bytes,
                        dtype: request.dtype.clone(),
                        role: request.role,
                        users: 0,
                    });
                    buffers.len() - 1
                });
                buffers[buffer].users += 1;
                mine.push(buffer);
                continue;
            }
            let shareable = match (request.role, request.source) {
                (Role::Private, _) => false,
                (_, Source::Flowing) | (Role::Activation, _) => true,
                (Role::Parameter, _) => sharing == Sharing::ParametersToo,
            };
            let found = shareable
                .then(|| pools.get(&(request.role, request.bytes, request.dtype.as_str())))
                .flatten()
                .and_then(|pool| pool.iter().copied().find(|b| !mine.contains(b)));
            let buffer = match found {
                Some(b) => b,
                None => {
                    buffers.push(Buffer {
                        bytes: request.bytes,
                        dtype: request.dtype.clone(),
                        role: request.role,
                        users: 0,
                    });
                    let b = buffers.len() - 1;
                    if shareable {
                        pools
                            .entry((request.role, request.bytes, request.dtype.as_str()))
                            .or_default()
                            .push(b);
                    }
                    b
                }
            };
            buffers[buffer].users += 1;
            mine.push(buffer);
        }
        assignment.push(mine);
    }
    let flowing = flow.map_or(Some(0), |f| {
        f.live_peak_bytes.checked_add(f.aliased_storage_bytes)
    });
    let peak = buffers
        .iter()
        .try_fold(0u64, |sum, b| sum.checked_add(b.bytes))
        .and_then(|sum| sum.checked_add(flowing?))
        .filter(|&p| p <= ADDRESS_SPACE)
        .ok_or(PlanError::AddressSpace {
            op: ops.len().saturating_sub(1),
            bytes: None,
        })?;
    Ok(MemoryPlan {
        sharing,
        budget,
        buffers,
        assignment,
        peak_bytes: peak,
        flow: flow.cloned(),
        unshared_bytes: unshared,
        oversized,
    })
}

/// The plan of `ops` within `budget`: with [`Sharing::Activations`], else with
/// [`Sharing::ParametersToo`] when that fits; an error naming the peak and the budget when
/// neither does.
pub fn plan(ops: &[OpNeeds], budget: u64) -> Result<MemoryPlan, PlanError> {
    plan_flow(ops, None, budget)
}

/// [`plan`] with an Execution Trace's data flow: see [`plan_flow_with`].
pub fn plan_flow(
    ops: &[OpNeeds],
    flow: Option<&FlowMemory>,
    budget: u64,
) -> Result<MemoryPlan, PlanError> {
    let first = plan_flow_with(ops, flow, Sharing::Activations, budget)?;
    if first.peak_bytes <= budget {
        return Ok(first);
    }
    let more = plan_flow_with(ops, flow, Sharing::ParametersToo, budget)?;
    if more.peak_bytes <= budget {
        return Ok(more);
    }
    Err(PlanError::OverBudget {
        peak: more.peak_bytes,
        budget,
        sharing: more.sharing,
    })
}

/// The op needing the most bytes alone, with its bytes (`None` for no op).
pub fn largest_op(ops: &[OpNeeds]) -> Option<(usize, u64)> {
    ops.iter()
        .enumerate()
        .filter_map(|(i, o)| o.bytes().map(|b| (i, b)))
        .max_by_key(|&(i, b)| (b, std::cmp::Reverse(i)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(bytes: u64, dtype: &str) -> Request {
        Request::new(bytes, dtype, Role::Activation)
    }
    fn param(bytes: u64) -> Request {
        Request::new(bytes, "float32", Role::Parameter)
    }
    fn op(requests: Vec<Request>) -> OpNeeds {
        OpNeeds { requests }
    }

    /// Two linear layers and an add: x[4 KiB] · W1, x · W2 (same size as W1), add(a, b).
    fn two_linears_and_an_add() -> Vec<OpNeeds> {
        vec![
            op(vec![act(4096, "float32"), param(16384), param(64)]),
            op(vec![act(4096, "float32"), param(16384), param(64)]),
            op(vec![act(4096, "float32"), act(4096, "float32")]),
        ]
    }

    #[test]
    fn activations_share_once_their_op_has_run_and_parameters_do_not() {
        let ops = two_linears_and_an_add();
        let plan = plan_with(&ops, Sharing::Activations, u64::MAX).unwrap();
        // Unshared: 3 × 4096 + 2 × (16384 + 64) + 4096 = 16384 + 32896 = 49280.
        assert_eq!(plan.unshared_bytes, 49_280);
        // Activations: op 2 needs two 4096-byte float32 buffers at once, so two in all;
        // parameters: both layers' own, 2 × 16448. 8192 + 32896 = 41088.
        assert_eq!(plan.peak_bytes, 41_088);
        assert_eq!(plan.assignment[0][0], plan.assignment[1][0]);
        assert_eq!(plan.assignment[2][0], plan.assignment[0][0]);
        assert_ne!(plan.assignment[2][1], plan.assignment[2][0]);
        assert_ne!(plan.assignment[0][1], plan.assignment[1][1]);
        // One buffer serves three activations; the other buffers one request each.
        assert_eq!(plan.shared_buffers(), 1);
        assert_eq!(plan.shared_requests(), 3);
        assert_eq!(plan.requests(), 8);
        assert!(plan.oversized.is_empty());
    }

    #[test]
    fn dtype_and_size_both_must_match_and_private_requests_are_never_shared() {
        let ops = vec![
            op(vec![
                act(100, "float32"),
                Request::new(8, "int64", Role::Private),
            ]),
            op(vec![
                act(100, "bfloat16"),
                Request::new(8, "int64", Role::Private),
            ]),
            op(vec![act(200, "float32")]),
            op(vec![act(100, "float32")]),
        ];
        let plan = plan_with(&ops, Sharing::ParametersToo, u64::MAX).unwrap();
        // Buffers: f32 100 (ops 0, 3), int64 8 twice, bf16 100, f32 200: 100+8+100+8+200.
        assert_eq!(plan.peak_bytes, 416);
        assert_eq!(plan.buffers.len(), 5);
        assert_eq!(plan.assignment[3][0], plan.assignment[0][0]);
        assert_eq!(plan.unshared_bytes, 516);
    }

    #[test]
    fn over_the_budget_parameters_are_shared_too_else_refused() {
        let ops = two_linears_and_an_add();
        // 41088 does not fit 40000; with one 16448 weight set: 8192 + 16448 = 24640.
        let more = plan(&ops, 40_000).unwrap();
        assert_eq!(more.sharing, Sharing::ParametersToo);
        assert_eq!(more.peak_bytes, 24_640);
        assert_eq!(more.assignment[0][1], more.assignment[1][1]);
        assert_eq!(plan(&ops, 41_088).unwrap().sharing, Sharing::Activations);
        let err = plan(&ops, 24_639).unwrap_err();
        assert_eq!(
            err,
            PlanError::OverBudget {
                peak: 24_640,
                budget: 24_639,
                sharing: Sharing::ParametersToo
            }
        );
        assert!(err.to_string().contains("over the memory budget"), "{err}");
    }

    #[test]
    fn an_op_alone_over_the_budget_is_left_out_and_the_rest_planned() {
        let ops = vec![
            op(vec![act(1000, "float32")]),
            op(vec![act(3000, "float32"), param(3000)]),
            op(vec![act(1000, "float32"), act(1000, "float32")]),
        ];
        let planned = plan(&ops, 5000).unwrap();
        assert_eq!(planned.oversized, vec![Oversized { op: 1, bytes: 6000 }]);
        assert!(planned.assignment[1].is_empty());
        assert_eq!(planned.peak_bytes, 2000);
        assert_eq!(planned.unshared_bytes, 9000);
        assert_eq!(largest_op(&ops), Some((1, 6000)));
        assert_eq!(largest_op(&[]), None);
    }

    #[test]
    fn with_a_data_flow_stand_ins_share_whatever_their_role_and_an_external_is_one_buffer() {
        let from = |r: Request, source: Source| Request { source, ..r };
        let ops = vec![
            // Reads the model's input x (external 8) and a weight W (external 7).
            op(vec![
                from(act(4096, "float32"), Source::External(8)),
                from(param(16384), Source::External(7)),
            ]),
            // Reads op 0's output and W again.
            op(vec![
                from(act(4096, "float32"), Source::Flowing),
                from(param(16384), Source::External(7)),
            ]),
            // Two flowing inputs, one in a parameter-named argument (a weight made in the step).
            op(vec![
                from(param(4096), Source::Flowing),
                from(act(4096, "float32"), Source::Flowing),
            ]),
            op(vec![from(param(4096), Source::Flowing)]),
        ];
        let flow = FlowMemory {
            live_peak_bytes: 1000,
            aliased_storage_bytes: 24,
            ..FlowMemory::default()
        };
        let plan = plan_flow_with(&ops, Some(&flow), Sharing::Activations, u64::MAX).unwrap();
        // Buffers: x 4096, W 16384 (two readers), an activation stand-in 4096 (ops 1 and 2),
        // a parameter stand-in 4096 (ops 2 and 3): 28672; with the flow's 1024, 29696.
        assert_eq!(plan.peak_bytes, 29_696);
        assert_eq!(plan.buffers.len(), 4);
        assert_eq!(
            plan.assignment[1][1], plan.assignment[0][1],
            "W is one buffer"
        );
        assert_eq!(plan.assignment[2][1], plan.assignment[1][0]);
        assert_eq!(plan.assignment[3][0], plan.assignment[2][0]);
        assert_ne!(
            plan.assignment[2][0], plan.assignment[2][1],
            "never within one op"
        );
        assert_eq!(plan.flow.as_ref(), Some(&flow));
        assert!(
            plan.describe().contains("last reader"),
            "{}",
            plan.describe()
        );
        // The same requests by size alone: each op's own weights, x shared with the stand-ins:
        // 4096 + 2 x 16384 + 2 x 4096 = 45056.
        let sized: Vec<OpNeeds> = ops
            .iter()
            .map(|o| OpNeeds {
                requests: o
                    .requests
                    .iter()
                    .map(|r| from(r.clone(), Source::Sized))
                    .collect(),
            })
            .collect();
        let before = plan_with(&sized, Sharing::Activations, u64::MAX).unwrap();
        assert_eq!(before.peak_bytes, 45_056);
        assert_eq!(before.flow, None);
        assert_eq!(plan.unshared_bytes, before.unshared_bytes);
    }

    #[test]
    fn shapes_past_the_address_space_are_refused_before_anything_is_planned() {
        let ops = vec![
            op(vec![act(10, "float32")]),
            op(vec![act(u64::MAX, "float32"), act(1, "float32")]),
        ];
        assert_eq!(
            plan(&ops, u64::MAX).unwrap_err(),
            PlanError::AddressSpace { op: 1, bytes: None }
        );
        let big = vec![op(vec![act(ADDRESS_SPACE + 1, "uint8")])];
        let err = plan(&big, u64::MAX).unwrap_err();
        assert!(err.to_string().contains("address space"), "{err}");
    }
}
