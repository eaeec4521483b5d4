//! Which replayer each op of a re-run step gets (`replay sequence`).
//!
//! Alone, each tier has its own replayer: the CUDA runtime's copies and memsets and cuBLAS
//! GEMMs on replay's stream, libtorch's dispatcher on libtorch's current stream, on the CPU
//! the host. A sequence is timed by one timer in one place, so on CUDA every op must run on
//! one stream: copies, memsets and GEMMs go through libtorch too (its current stream), as
//! the model's own ops did. On the CPU every replayer runs on the host; there, an op whose
//! inputs flow from its producer (an Execution Trace linked) must be libtorch's call of the
//! op, GEMMs included (on a CPU trace they are top-level ops), so that it takes and gives
//! real tensors. A TorchScript fusion group (`fused_*`) is no dispatcher op: it always runs as
//! `isolated` runs it, its NNC kernel on inputs of its own, on libtorch's current stream.

use crate::signature::schema::Tier;

/// How one op of a sequence is replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Its tier's own replayer, as `isolated` replays it.
    Native,
    /// libtorch's dispatcher calls the op that did the work (tier 3's replay).
    Dispatcher,
    /// A copy or memset issued by libtorch (`copy_`, `fill_`) on its current stream.
    LibtorchMemory,
}

/// Where the sequence runs, and whether its data flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placing {
    /// On a CUDA device (else the CPU).
    pub cuda: bool,
    /// Outputs flow into their consumers (an Execution Trace linked).
    pub flow: bool,
}

/// The route of an op of `tier`; `fusion_group` for a TorchScript fusion group's kernel.
pub fn route(tier: Tier, fusion_group: bool, placing: Placing) -> Route {
    if fusion_group {
        return Route::Native;
    }
    match (tier, placing.cuda) {
        // Libtorch's stream for everything it can issue.
        (Tier::Copy, true) => Route::LibtorchMemory,
        (Tier::Gemm | Tier::Op, true) => Route::Dispatcher,
        // Tier 4 runs the generated kernel itself; a sequence mixing it with libtorch's
        // stream is refused by the one-placement check, not simulated.
        (Tier::Generated, _) => Route::Native,
        (Tier::Gemm | Tier::Op, false) if placing.flow => Route::Dispatcher,
        (Tier::Copy | Tier::Gemm | Tier::Op, false) => Route::Native,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: Placing = Placing {
        cuda: false,
        flow: false,
    };
    const CPU_FLOW: Placing = Placing {
        cuda: false,
        flow: true,
    };
    const CUDA: Placing = Placing {
        cuda: true,
        flow: false,
    };
    const CUDA_FLOW: Placing = Placing {
        cuda: true,
        flow: true,
    };

    #[test]
    fn on_cuda_every_libtorch_able_op_runs_on_libtorchs_stream() {
        for placing in [CUDA, CUDA_FLOW] {
            assert_eq!(route(Tier::Copy, false, placing), Route::LibtorchMemory);
            assert_eq!(route(Tier::Gemm, false, placing), Route::Dispatcher);
            assert_eq!(route(Tier::Op, false, placing), Route::Dispatcher);
            assert_eq!(route(Tier::Generated, false, placing), Route::Native);
        }
    }

    #[test]
    fn on_the_cpu_the_tiers_replay_as_alone_unless_data_flows() {
        for tier in [Tier::Copy, Tier::Gemm, Tier::Op, Tier::Generated] {
            assert_eq!(route(tier, false, CPU), Route::Native, "{tier:?}");
        }
        assert_eq!(route(Tier::Gemm, false, CPU_FLOW), Route::Dispatcher);
        assert_eq!(route(Tier::Op, false, CPU_FLOW), Route::Dispatcher);
        assert_eq!(route(Tier::Copy, false, CPU_FLOW), Route::Native);
        assert_eq!(route(Tier::Generated, false, CPU_FLOW), Route::Native);
    }

    #[test]
    fn a_fusion_group_runs_its_own_kernel_wherever_the_sequence_runs() {
        for placing in [CPU, CPU_FLOW, CUDA, CUDA_FLOW] {
            assert_eq!(route(Tier::Op, true, placing), Route::Native, "{placing:?}");
            assert_eq!(
                route(Tier::Op, false, placing) == Route::Native,
                !placing.cuda && !placing.flow
            );
        }
    }
}
