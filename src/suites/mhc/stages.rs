//! The seed's six timed stages, the three ways a run places them (CPU only, offload
//! simulation, all on the GPU), and the two implementations.

use crate::device::DeviceSpec;

/// One line of the seed's console block and one `Case` of its CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    D2hCopy,
    Linear,
    Sinkhorn,
    Apply,
    H2dCopy,
    Total,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::D2hCopy,
        Stage::Linear,
        Stage::Sinkhorn,
        Stage::Apply,
        Stage::H2dCopy,
        Stage::Total,
    ];

    pub fn number(self) -> usize {
        self as usize
    }

    /// The seed's name of the stage (its CSV `Case`).
    pub fn case_name(self) -> &'static str {
        match self {
            Stage::D2hCopy => "D2H Copy (GPU->CPU)",
            Stage::Linear => "H_res Gen (Linear)",
            Stage::Sinkhorn => "H_res Gen (Sinkhorn-Knopp)",
            Stage::Apply => "h_res App (BMM)",
            Stage::H2dCopy => "H2D Copy (CPU->GPU)",
            Stage::Total => "Total",
        }
    }

    /// The seed's console label: `2. H_res Gen (Sinkhorn-Knopp)`.
    pub fn label(self) -> String {
        format!("{}. {}", self.number(), self.case_name())
    }

    pub fn is_copy(self) -> bool {
        matches!(self, Stage::D2hCopy | Stage::H2dCopy)
    }
}

/// `--impl`: the seed's libtorch composition, or replay's fused kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Impl {
    Torch,
    Fused,
}

impl Impl {
    pub fn name(self) -> &'static str {
        match self {
            Impl::Torch => "torch",
            Impl::Fused => "fused",
        }
    }
}

impl std::str::FromStr for Impl {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "torch" => Ok(Impl::Torch),
            "fused" => Ok(Impl::Fused),
            _ => Err(format!(
                "unknown implementation '{text}' (accepted: torch, fused)"
            )),
        }
    }
}

/// Where the stages run. The GPU of the two GPU placements is not held here: the command
/// opened it once (`command::placement`) and hands it down beside the placement (the suite's
/// settings, the run's options), and the texts that name it take its `DeviceSpec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// `--device cpu` on a machine without a CUDA GPU: stages 1–3 on the host; there is
    /// nothing to copy from, so stages 0 and 4 are not applicable.
    CpuOnly,
    /// `--device cpu` while a CUDA GPU is present (the seed's offload simulation): the inputs
    /// live on the GPU, stage 0 copies them into pinned host memory, 1–3 run on the host,
    /// stage 4 copies the result back.
    Offload,
    /// `--device cuda:N`: everything on the GPU, no copies.
    Gpu,
}

/// How a GPU placement whose GPU was not handed down is named (never by a run: the command
/// opens the GPU of a GPU placement before it makes the placement).
const NO_GPU: &str = "cuda:?";

impl Placement {
    /// Why `stage` has no time in this placement, or `None` when it runs.
    pub fn not_applicable(self, stage: Stage) -> Option<&'static str> {
        match (self, stage.is_copy()) {
            (Placement::CpuOnly, true) => {
                Some("not applicable: no CUDA GPU on this machine to copy from or to")
            }
            (Placement::Gpu, true) => {
                Some("not applicable: --device cuda keeps everything on the GPU (no copies)")
            }
            _ => None,
        }
    }

    /// What stage 5 adds up here.
    pub fn total_note(self) -> &'static str {
        match self {
            Placement::CpuOnly => "stages 1-3 on the host, timed as one (no GPU: no copies)",
            Placement::Offload => {
                "D2H + stages 1-3 on the host + blocking H2D, timed as one on the host clock"
            }
            Placement::Gpu => "stages 1-3 on the GPU, timed as one (CUDA events)",
        }
    }

    /// A name that says which placement this is on `gpu` (`cpu`, `offload:cuda:N`,
    /// `cuda:N`): what a sharded run's work list and settings record, and
    /// [`Placement::from_key`] reads back.
    pub fn key(self, gpu: Option<DeviceSpec>) -> String {
        match self {
            Placement::CpuOnly => "cpu".into(),
            Placement::Offload => format!("offload:{}", gpu_name(gpu)),
            Placement::Gpu => gpu_name(gpu),
        }
    }

    /// The placement of a [`Placement::key`] and the GPU it names (`None` for `cpu`).
    pub fn from_key(key: &str) -> Option<(Placement, Option<DeviceSpec>)> {
        if key == "cpu" {
            return Some((Placement::CpuOnly, None));
        }
        let (placement, gpu) = match key.strip_prefix("offload:") {
            Some(gpu) => (Placement::Offload, gpu),
            None => (Placement::Gpu, key),
        };
        // Only the form `key` writes: `cuda:N`.
        let spec = gpu.parse::<DeviceSpec>().ok()?;
        (matches!(spec, DeviceSpec::Cuda(_)) && spec.to_string() == gpu)
            .then_some((placement, Some(spec)))
    }

    /// The seed's `Device` column, on `gpu` when the placement uses one.
    pub fn device_name(self, gpu: Option<DeviceSpec>) -> String {
        match self {
            Placement::CpuOnly | Placement::Offload => "cpu".into(),
            Placement::Gpu => gpu_name(gpu),
        }
    }
}

/// The name of a placement's GPU: `cuda:N`, or [`NO_GPU`] when none was handed down.
pub fn gpu_name(gpu: Option<DeviceSpec>) -> String {
    gpu.map_or_else(|| NO_GPU.to_string(), |gpu| gpu.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_keys_read_back() {
        for (p, gpu, key) in [
            (Placement::CpuOnly, None, "cpu"),
            (
                Placement::Offload,
                Some(DeviceSpec::Cuda(1)),
                "offload:cuda:1",
            ),
            (Placement::Gpu, Some(DeviceSpec::Cuda(0)), "cuda:0"),
        ] {
            assert_eq!(p.key(gpu), key);
            assert_eq!(Placement::from_key(key), Some((p, gpu)));
        }
        for bad in [
            "tpu",
            "cuda:x",
            "cuda",
            "offload:cpu",
            "offload:",
            "gpu:0",
            "cuda:?",
        ] {
            assert_eq!(Placement::from_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_device_column_names_the_gpu_only_when_everything_is_on_it() {
        let gpu = Some(DeviceSpec::Cuda(2));
        assert_eq!(Placement::CpuOnly.device_name(None), "cpu");
        assert_eq!(Placement::Offload.device_name(gpu), "cpu");
        assert_eq!(Placement::Gpu.device_name(gpu), "cuda:2");
        // A GPU placement without its GPU is named so that no key reads it back.
        assert_eq!(Placement::Gpu.device_name(None), "cuda:?");
        assert_eq!(Placement::from_key(&Placement::Offload.key(None)), None);
    }

    #[test]
    fn labels_are_the_seeds() {
        let labels: Vec<String> = Stage::ALL.iter().map(|s| s.label()).collect();
        assert_eq!(
            labels,
            [
                "0. D2H Copy (GPU->CPU)",
                "1. H_res Gen (Linear)",
                "2. H_res Gen (Sinkhorn-Knopp)",
                "3. h_res App (BMM)",
                "4. H2D Copy (CPU->GPU)",
                "5. Total"
            ]
        );
    }

    #[test]
    fn copies_are_not_applicable_without_a_gpu_or_with_everything_on_it() {
        for stage in Stage::ALL {
            assert_eq!(
                Placement::CpuOnly.not_applicable(stage).is_some(),
                stage.is_copy()
            );
            assert_eq!(Placement::Offload.not_applicable(stage), None);
            assert_eq!(
                Placement::Gpu.not_applicable(stage).is_some(),
                stage.is_copy()
            );
        }
    }
}
