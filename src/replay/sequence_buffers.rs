//! The buffers of a re-run step's memory plan (`replay sequence`), allocated as the plan says
//! ([`replay_core::sequence_plan`]): while an op is built, its replayer's tensors of any
//! values (activations, and parameters) come from the buffers the plan assigned to it, each
//! allocated once, on first use, and shared with the other ops the plan gave it to. Tensors
//! whose values matter are made by their replayer as before.
//!
//! The op being built is set for the building thread ([`SequenceBuffers::serve`]), so the
//! replayers' own tensor makers ask [`planned`] without knowing of the plan; outside `serve`
//! it answers `None` and nothing changes (`isolated`, `selftest`).

use std::cell::RefCell;
use std::rc::Rc;

use tch::{Kind, Tensor};

use crate::device::Device;
use replay_core::sequence_plan::{MemoryPlan, Role};

/// The key a request and a buffer share: its role, bytes and dtype.
fn key(role: Role, bytes: u64, kind: Kind) -> (Role, u64, String) {
    (role, bytes, format!("{kind:?}"))
}

/// The name a plan's request carries for `kind`: what [`planned`] matches.
pub fn dtype_name(kind: Kind) -> String {
    format!("{kind:?}")
}

/// `len` elements of `kind` holding values of any kind an op reads as data: normal(0, 1) for
/// floating types, zeros for integers, a random mask for booleans. Drawn in `kind` itself
/// where libtorch can, so that no wider temporary (a float32 draw of a bfloat16 buffer, twice
/// its bytes) is live beside the buffer: the plan counts the buffer only.
pub fn data_base(kind: Kind, len: i64, device: &Device) -> Result<Tensor, tch::TchError> {
    match kind {
        Kind::Float | Kind::Double | Kind::Half | Kind::BFloat16 => {
            Tensor::f_randn([len], (kind, device.torch()))
        }
        Kind::Int64 | Kind::Int | Kind::Int16 | Kind::Int8 | Kind::Uint8 => {
            Tensor::f_zeros([len], (kind, device.torch()))
        }
        Kind::Bool => Tensor::f_rand([len], (Kind::Float, device.torch()))?.f_lt(0.5),
        _ => Tensor::f_randn([len], (Kind::Float, device.torch()))?.f_to_kind(kind),
    }
}

#[derive(Default)]
struct Store {
    keys: Vec<(Role, u64, String)>,
    tensors: Vec<Option<Tensor>>,
    /// Bytes replayers asked for outside the plan while an op was served.
    unplanned: u64,
    allocated: u64,
    /// What the budget leaves beside the plan's buffers: the most that may be asked for
    /// outside the plan, in all, before such a request is refused as out of memory.
    outside_allowance: u64,
}

/// The op being built: its planned buffers, and which it has taken.
struct Serving {
    store: Rc<RefCell<Store>>,
    assigned: Vec<(usize, bool)>,
    device: Device,
}

thread_local! {
    static SERVING: RefCell<Option<Serving>> = const { RefCell::new(None) };
}

/// A step's planned buffers on one device.
pub struct SequenceBuffers {
    store: Rc<RefCell<Store>>,
    device: Device,
}

impl SequenceBuffers {
    /// No buffer is allocated yet: each is on the first op that takes it.
    pub fn new(plan: &MemoryPlan, device: &Device) -> SequenceBuffers {
        let keys = plan
            .buffers
            .iter()
            .map(|b| (b.role, b.bytes, b.dtype.clone()))
            .collect::<Vec<_>>();
        let tensors = keys.iter().map(|_| None).collect();
        SequenceBuffers {
            store: Rc::new(RefCell::new(Store {
                keys,
                tensors,
                outside_allowance: plan.budget.saturating_sub(plan.peak_bytes),
                ..Store::default()
            })),
            device: device.clone(),
        }
    }

    /// Runs `build` (an op's replayer being made) with `assigned` (the plan's buffers for
    /// that op) served to its tensor makers.
    pub fn serve<T>(&self, assigned: &[usize], build: impl FnOnce() -> T) -> T {
        SERVING.with(|s| {
            *s.borrow_mut() = Some(Serving {
                store: self.store.clone(),
                assigned: assigned.iter().map(|&b| (b, false)).collect(),
                device: self.device.clone(),
            })
        });
        let built = build();
        SERVING.with(|s| *s.borrow_mut() = None);
        built
    }

    /// Bytes of the buffers allocated so far.
    pub fn allocated_bytes(&self) -> u64 {
        self.store.borrow().allocated
    }

    /// Bytes the replayers asked for outside the plan (a fallback to an enclosing op, say).
    pub fn unplanned_bytes(&self) -> u64 {
        self.store.borrow().unplanned
    }
}

/// A tensor of `len` elements of `kind` in `role` from the plan's buffers for the op being
/// built: `None` when no op is being served (the caller allocates as before) or, counted as
/// unplanned, when the plan has no free buffer of that size and dtype for it; an error
/// (out of memory, [`super::memory_limit::OVER_LIMIT`]) when what was asked outside the
/// plan would pass the budget beside the plan's buffers, so that the op is reported `oom`
/// instead of the step growing past `--memory-budget`.
pub fn planned(kind: Kind, len: i64, role: Role) -> Option<Result<Tensor, tch::TchError>> {
    SERVING.with(|s| {
        let mut serving = s.borrow_mut();
        let serving = serving.as_mut()?;
        let bytes = u64::try_from(len).ok()? * kind.elt_size_in_bytes() as u64;
        let wanted = key(role, bytes, kind);
        let mut store = serving.store.borrow_mut();
        let Some(slot) = serving
            .assigned
            .iter_mut()
            .find(|(b, taken)| !taken && store.keys[*b] == wanted)
        else {
            let outside = store.unplanned.saturating_add(bytes);
            if outside > store.outside_allowance {
                return Some(Err(tch::TchError::Torch(format!(
                    "a tensor of {} outside the memory plan, {}: with the {} asked outside it \
                     before, it passes what the budget leaves beside the plan's buffers ({})",
                    replay_core::memory_size::size_text(bytes),
                    super::memory_limit::OVER_LIMIT,
                    replay_core::memory_size::size_text(store.unplanned),
                    replay_core::memory_size::size_text(store.outside_allowance)
                ))));
            }
            store.unplanned = outside;
            return None;
        };
        slot.1 = true;
        let buffer = slot.0;
        if store.tensors[buffer].is_none() {
            match data_base(kind, len, &serving.device) {
                Ok(t) => {
                    store.tensors[buffer] = Some(t);
                    store.allocated += bytes;
                }
                Err(e) => return Some(Err(e)),
            }
        }
        store.tensors[buffer]
            .as_ref()
            .map(|t| Ok(t.shallow_clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use replay_core::sequence_plan::{plan_with, OpNeeds, Request, Sharing};

    #[test]
    fn ops_take_their_planned_buffers_and_share_them_as_planned() {
        let f32 = dtype_name(Kind::Float);
        let ops = vec![
            OpNeeds {
                requests: vec![Request::new(64, &f32, Role::Activation)],
            },
            OpNeeds {
                requests: vec![
                    Request::new(64, &f32, Role::Activation),
                    Request::new(64, &f32, Role::Activation),
                ],
            },
        ];
        let plan = plan_with(&ops, Sharing::Activations, u64::MAX).unwrap();
        let buffers = SequenceBuffers::new(&plan, Device::host());
        assert!(
            planned(Kind::Float, 16, Role::Activation).is_none(),
            "not serving"
        );
        let first = buffers.serve(&plan.assignment[0], || {
            planned(Kind::Float, 16, Role::Activation).unwrap().unwrap()
        });
        let (a, b, extra) = buffers.serve(&plan.assignment[1], || {
            (
                planned(Kind::Float, 16, Role::Activation).unwrap().unwrap(),
                planned(Kind::Float, 16, Role::Activation).unwrap().unwrap(),
                planned(Kind::Float, 16, Role::Activation),
            )
        });
        assert_eq!(a.data_ptr(), first.data_ptr(), "shared once op 0 has run");
        assert_ne!(b.data_ptr(), a.data_ptr(), "never within one op");
        assert!(extra.is_none());
        assert_eq!(buffers.allocated_bytes(), 128);
        assert_eq!(buffers.unplanned_bytes(), 64);
    }

    #[test]
    fn what_is_asked_outside_the_plan_stays_within_the_budget_or_is_out_of_memory() {
        let f32 = dtype_name(Kind::Float);
        let ops = vec![OpNeeds {
            requests: vec![Request::new(64, &f32, Role::Activation)],
        }];
        // The plan's 64 bytes and 100 more: one 64-byte tensor outside fits, a second not.
        let plan = plan_with(&ops, Sharing::Activations, 164).unwrap();
        let buffers = SequenceBuffers::new(&plan, Device::host());
        let (first, second) = buffers.serve(&plan.assignment[0], || {
            let _ = planned(Kind::Float, 16, Role::Activation).unwrap().unwrap();
            (
                planned(Kind::Float, 16, Role::Activation),
                planned(Kind::Float, 16, Role::Activation),
            )
        });
        assert!(first.is_none(), "allocated by the caller, counted");
        let err = second.unwrap().unwrap_err().to_string();
        assert!(
            err.contains(super::super::memory_limit::OVER_LIMIT),
            "{err}"
        );
        assert_eq!(buffers.unplanned_bytes(), 64);
    }
}
