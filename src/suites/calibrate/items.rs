//! A calibration's work items, the cases of its suite ([`super::suite`]): in the seed's order,
//! matmul (sizes × dtypes), memory (copy sizes), the fusion families, then the host's costs.
//! Each item measures one or more things, each under its profile key with its result.

use super::matmul::{self, MatmulDtype};
use super::peaks::Peaks;
use super::profile::{FusionProfile, OperationProfile};
use super::run::{CalibrateOptions, Operation};
use super::CalibrateError;
use crate::device::Device;
use crate::host::{self, HostProfile};

/// One item of the work list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkItem {
    /// A square product of size `n` in `dtype`.
    Matmul { dtype: MatmulDtype, n: i64 },
    /// Copies (libtorch's and replay's own kernels) of `size_mb` MB.
    Memory { size_mb: u64 },
    /// The fused-versus-unfused patterns of one family.
    Fusion(super::fusion::FusionFamily),
    /// The host's costs without the profiler (the profile's `host` section).
    Host,
}

/// One result of a work item.
pub enum Measured {
    Operation(OperationProfile),
    Fusion(FusionProfile),
    Host(HostProfile),
}

/// What one item measured: each profile key's result, or why it failed.
pub type ItemResults = Vec<(String, Result<Measured, String>)>;

/// The work list `options` asks for, in the order it runs.
pub fn work_items(options: &CalibrateOptions) -> Vec<WorkItem> {
    let mut items = Vec::new();
    if options.operations.contains(&Operation::Matmul) {
        for &dtype in &options.dtypes {
            for n in matmul::sizes(options.quick) {
                items.push(WorkItem::Matmul { dtype, n });
            }
        }
    }
    if options.operations.contains(&Operation::Memory) {
        for size_mb in memory_sizes_mb(options.quick) {
            items.push(WorkItem::Memory { size_mb });
        }
    }
    items.extend(
        options
            .fusion
            .iter()
            .map(|&family| WorkItem::Fusion(family)),
    );
    if options.operations.contains(&Operation::Host) {
        items.push(WorkItem::Host);
    }
    items
}

/// The seed's copy sizes: quick [128, 256] MB, full [64, 128, 256, 512] MB.
pub fn memory_sizes_mb(quick: bool) -> Vec<u64> {
    if quick {
        vec![128, 256]
    } else {
        vec![64, 128, 256, 512]
    }
}

impl WorkItem {
    /// The item's label: its line on the progress bar, its id in the work list a shard
    /// records and its name in the journal.
    pub fn label(&self) -> String {
        match self {
            WorkItem::Matmul { dtype, n } => format!("matmul {} N={n}", dtype.name()),
            WorkItem::Memory { size_mb } => format!("memory {size_mb} MB"),
            WorkItem::Fusion(family) => format!("fusion {}", family.name()),
            WorkItem::Host => host::LABEL.into(),
        }
    }

    /// Measures the item on `device`: every key's result (a failure is a result, never the
    /// end of the run).
    pub fn measure(
        &self,
        device: &Device,
        options: &CalibrateOptions,
        peaks: &Peaks,
    ) -> Vec<(String, Result<Measured, CalibrateError>)> {
        let trials = matmul::trials(options.quick);
        match *self {
            WorkItem::Matmul { dtype, n } => {
                let peak = peaks
                    .gflops
                    .get(dtype.name())
                    .cloned()
                    .unwrap_or_else(|| peaks.fp32());
                let result = matmul::measure(device, n, dtype, trials, &peak);
                vec![(matmul::key(n, dtype), result.map(Measured::Operation))]
            }
            WorkItem::Memory { size_mb } => {
                let threads = match device {
                    Device::Cpu(info) => options.threads.unwrap_or(info.logical_cores).max(1),
                    Device::Cuda(_) => 1,
                };
                super::memory::measure_memory_with(
                    device,
                    &[size_mb],
                    trials,
                    peaks.bandwidth_gbps.value,
                    crate::kernels::stream_bandwidth::cpu::CpuKernelConfig::with_threads(threads),
                )
                .into_iter()
                .map(|(key, r)| (key, r.map(Measured::Operation)))
                .collect()
            }
            WorkItem::Fusion(family) => {
                super::fusion::measure_fusion(device, &[family], options.quick)
                    .into_iter()
                    .map(|(key, r)| (key, r.map(Measured::Fusion)))
                    .collect()
            }
            WorkItem::Host => host_results(device),
        }
    }
}

/// The host item's results: the section under `host`, and each figure that failed under
/// `host <field>`.
fn host_results(device: &Device) -> Vec<(String, Result<Measured, CalibrateError>)> {
    match host::measure_host(device, "replay calibrate", &mut |_| {}) {
        Ok(measured) => std::iter::once((
            host::LABEL.to_string(),
            Ok(Measured::Host(measured.profile)),
        ))
        .chain(measured.failures.into_iter().map(|(field, why)| {
            (
                format!("{} {field}", host::LABEL),
                Err(CalibrateError::Measure(why)),
            )
        }))
        .collect(),
        Err(e) => vec![(host::LABEL.to_string(), Err(e.into()))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::calibrate::fusion::FusionFamily;

    fn options(operations: Vec<Operation>, fusion: Vec<FusionFamily>) -> CalibrateOptions {
        CalibrateOptions {
            hardware: None,
            peak_gflops: None,
            peak_bandwidth_gbps: None,
            quick: true,
            operations,
            dtypes: vec![MatmulDtype::Float32, MatmulDtype::BFloat16],
            fusion,
            threads: None,
            output: "profile.json".into(),
        }
    }

    #[test]
    fn the_work_list_is_in_the_seeds_order_with_the_labels_shards_record() {
        let all = options(
            vec![Operation::Host, Operation::Memory, Operation::Matmul],
            vec![FusionFamily::Linear, FusionFamily::Attention],
        );
        let labels: Vec<String> = work_items(&all).iter().map(WorkItem::label).collect();
        assert_eq!(
            labels,
            [
                "matmul float32 N=1024",
                "matmul float32 N=2048",
                "matmul bfloat16 N=1024",
                "matmul bfloat16 N=2048",
                "memory 128 MB",
                "memory 256 MB",
                "fusion linear",
                "fusion attention",
                "host",
            ]
        );
        let host_only = options(vec![Operation::Host], vec![]);
        assert_eq!(work_items(&host_only), [WorkItem::Host]);
    }
}
