//! The counting CPU allocator of the shim: what it counts, that storage from before its install
//! is freed by its own deleter, and that the torch backend's peaks are measured (the backward's
//! above the forward's). The counter is process-wide, so everything runs in one test, in order:
//! tests running beside it would move the counts (and it must find the counter not yet
//! installed), so this is a test binary of its own.

use replay::replay::sequence_buffers::data_base;
use replay::replay::tier1_memory::{CpuMemoryTarget, MemoryWork};
use replay::signature::schema::{MemcpyKind, MemcpyParams, MemoryKind, MemsetParams};
use replay::suites::scan::torch_backend::TorchBackend;
use replay::suites::scan::{Phase, ScanBackend, ScanDims, ScanProblem, Semiring};
use replay::torch::cpu_memory_counter as counter;
use tch::{Device, Kind, Tensor};

const FLOATS: i64 = 1 << 20;
const BYTES: u64 = 4 << 20;

#[test]
fn the_counting_allocator_measures_cpu_tensors() {
    // Storage from before the install: after it, freeing this must neither crash (it goes to
    // its own deleter) nor move the count.
    let before = Tensor::ones([FLOATS], (Kind::Float, Device::Cpu));
    assert!(!counter::is_installed());
    assert_eq!(counter::peak_bytes(), 0);

    counter::install().expect("install the counting CPU allocator");
    counter::install().expect("a second install does nothing");
    assert!(counter::is_installed());

    // A known tensor moves live and peak by at least its bytes, and freeing it gives them back.
    counter::reset_peak();
    let live0 = counter::live_bytes();
    assert_eq!(counter::peak_bytes(), live0);
    let known = Tensor::ones([FLOATS], (Kind::Float, Device::Cpu));
    assert!(counter::live_bytes() >= live0 + BYTES);
    assert!(counter::peak_bytes() >= live0 + BYTES);
    let sum = known.sum(Kind::Double).double_value(&[]);
    assert_eq!(sum, FLOATS as f64, "the memory it hands out works");
    drop(known);
    assert_eq!(counter::live_bytes(), live0);
    assert!(
        counter::peak_bytes() >= live0 + BYTES,
        "the peak stays after the free"
    );

    let live1 = counter::live_bytes();
    drop(before);
    assert_eq!(
        counter::live_bytes(),
        live1,
        "pre-install storage is not counted"
    );

    // The torch backend's peaks: a forward (which builds the autograd graph, as the seed's
    // does) holds the copy of the edges and, for Log, logsumexp's saved inputs (about the
    // edges' size again); a backward runs that forward and then makes the gradients.
    let dims = ScanDims {
        batch: 4,
        positions: 128,
        durations: 8,
        labels: 6,
    };
    let edge: Vec<f32> = (0..dims.edge_len())
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let edge_bytes = (edge.len() * 4) as u64;
    let problem = ScanProblem::new(dims, &edge, None).unwrap();
    let mut prepared = TorchBackend::cpu()
        .prepare(&problem, Semiring::Log)
        .unwrap();

    prepared.reset_peak_memory();
    let live = counter::live_bytes();
    prepared.run_once(Phase::Forward).unwrap();
    let forward = prepared.peak_memory();
    assert_eq!(forward.allocated, forward.reserved);
    assert!(
        forward.allocated >= live + 2 * edge_bytes,
        "forward peak {} over {live} live, edges {edge_bytes} bytes",
        forward.allocated
    );

    prepared.reset_peak_memory();
    prepared.run_once(Phase::Backward).unwrap();
    let backward = prepared.peak_memory();
    // The backward phase runs its own forward first, so its peak is at least the forward's;
    // the gradients (of the gathered edges, then of the edges) come on top of the edges' copy.
    assert!(
        backward.allocated >= forward.allocated,
        "backward peak {} against forward {}",
        backward.allocated,
        forward.allocated
    );
    assert!(backward.allocated >= live + 2 * edge_bytes);
    eprintln!(
        "edges {edge_bytes} B; peaks over {live} B live: forward {} B, backward {} B",
        forward.allocated - live,
        backward.allocated - live
    );
    drop(prepared);

    // A re-run step's planned buffer (`replay sequence`) is drawn in its own dtype: drawing a
    // bfloat16 buffer peaks at its own bytes, with no float32 draw (twice them) beside it,
    // which the memory plan would not count.
    counter::reset_peak();
    let live = counter::live_bytes();
    let buffer = data_base(Kind::BFloat16, FLOATS, replay::device::Device::host()).unwrap();
    assert_eq!(buffer.kind(), Kind::BFloat16);
    assert_eq!(counter::live_bytes() - live, 2 * FLOATS as u64);
    assert_eq!(counter::peak_bytes() - live, 2 * FLOATS as u64);
    drop(buffer);

    // A host copy's two buffers are libtorch tensors: the step's measured peak sees them.
    let live = counter::live_bytes();
    let copy = CpuMemoryTarget::new(MemoryWork::Copy(MemcpyParams {
        kind: MemcpyKind::HtoD,
        src: MemoryKind::Pageable,
        dst: MemoryKind::Device,
        bytes: BYTES,
    }))
    .unwrap();
    assert_eq!(counter::live_bytes() - live, 2 * BYTES);
    drop(copy);
    assert_eq!(counter::live_bytes(), live);

    // A host memset's one buffer (it has no source), counted as it is written: its runs set
    // the very bytes the counter sees.
    let mut set = CpuMemoryTarget::new(MemoryWork::Set(MemsetParams { bytes: BYTES })).unwrap();
    assert_eq!(counter::live_bytes() - live, BYTES);
    replay::measure::Target::run(&mut set, 4).unwrap();
    assert_eq!(
        counter::live_bytes() - live,
        BYTES,
        "a run allocates nothing"
    );
    assert!(set.output().iter().all(|&b| b == 3));
    drop(set);
    assert_eq!(counter::live_bytes(), live);
}
