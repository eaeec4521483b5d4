//! The timeline model on small Kineto traces whose timelines are worked out by hand: event
//! and stream synchronisations, two host threads launching to two streams, memsets and
//! copies (one of them blocking), and a CUDA-graph launch. Each case is a trace written
//! here (the format of `../shared/reference/kineto-trace-format.md`), its skeleton checked
//! item by item, its self-check, and what-ifs whose times are derived in the comments. The
//! real traces that contain these patterns are checked in `predict_kineto_real`.

use std::path::Path;

use replay_core::predict::{self, simulate, ActivityKind, Durations, HostItem, Skeleton, WaitKind};
use replay_core::trace::{self, Nanos, Trace};

pub(crate) const US: Nanos = 1000;

/// A Kineto trace written event by event. Host events are on pid 1; GPU events on device 0
/// with the stream as tid, as kineto writes them. Times in µs.
#[derive(Default)]
struct Kineto {
    events: Vec<String>,
}

impl Kineto {
    /// One complete event of `(pid, tid)` over `(ts, dur)` µs.
    fn push(
        &mut self,
        cat: &str,
        name: &str,
        (pid, tid): (i64, i64),
        (ts, dur): (f64, f64),
        args: &str,
    ) {
        self.events.push(format!(
            "{{\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \
             \"tid\": {tid}, \"ts\": {ts}, \"dur\": {dur}, \"args\": {{{args}}}}}"
        ));
    }

    /// The `ProfilerStep#1` span, recorded by host thread 1.
    fn step(mut self, ts: f64, dur: f64) -> Self {
        self.push("user_annotation", "ProfilerStep#1", (1, 1), (ts, dur), "");
        self
    }

    /// A CUDA runtime call on host thread `tid`.
    fn call(mut self, tid: i64, name: &str, ts: f64, dur: f64, correlation: i64) -> Self {
        let args = format!("\"correlation\": {correlation}");
        self.push("cuda_runtime", name, (1, tid), (ts, dur), &args);
        self
    }

    /// A GPU activity (`kernel`, `gpu_memcpy`, `gpu_memset`) on `stream`.
    fn gpu(
        mut self,
        cat: &str,
        name: &str,
        stream: i64,
        ts: f64,
        dur: f64,
        correlation: i64,
    ) -> Self {
        let args = format!(
            "\"device\": 0, \"stream\": {stream}, \"correlation\": {correlation}, \"bytes\": 4096"
        );
        self.push(cat, name, (0, stream), (ts, dur), &args);
        self
    }

    /// Kineto's `cuda_sync` row for the synchronising call with the same correlation id.
    fn sync_row(mut self, name: &str, stream: i64, ts: f64, dur: f64, correlation: i64) -> Self {
        let args = format!("\"device\": 0, \"stream\": {stream}, \"correlation\": {correlation}");
        self.push("cuda_sync", name, (0, stream), (ts, dur), &args);
        self
    }

    /// Kineto's `cuda_sync` row for a `cudaStreamWaitEvent` (correlation id `correlation`)
    /// that makes `stream` wait: newer kineto also names the stream the event was recorded on
    /// and the correlation id of its `cudaEventRecord`.
    fn wait_row(
        mut self,
        stream: i64,
        ts: f64,
        correlation: i64,
        recorded_on: i64,
        record: i64,
    ) -> Self {
        let args = format!(
            "\"device\": 0, \"stream\": {stream}, \"correlation\": {correlation}, \
             \"wait_on_stream\": {recorded_on}, \"wait_on_cuda_event_record_corr_id\": {record}"
        );
        self.push(
            "cuda_sync",
            "Stream Wait Event",
            (0, stream),
            (ts, 0.5),
            &args,
        );
        self
    }

    fn load(&self) -> Trace {
        let json = format!("{{\"traceEvents\": [\n{}\n]}}", self.events.join(",\n"));
        trace::load_bytes(json.into_bytes(), Path::new("hand-written.json"))
            .unwrap_or_else(|e| panic!("hand-written trace: {e}"))
    }
}

pub(crate) fn skeleton_of(trace: &Trace) -> Skeleton {
    predict::skeleton(trace).unwrap_or_else(|e| panic!("{e}"))
}

fn gap(us: Nanos) -> HostItem {
    HostItem::Gap {
        ns: us * US,
        profiled_ops: 0,
    }
}

fn launch(skeleton: &Skeleton, dispatch_us: Nanos, activities: Vec<usize>) -> HostItem {
    let signature = activities
        .first()
        .and_then(|&a| skeleton.steps[0].activities[a].signature);
    HostItem::Launch {
        signature,
        dispatch_ns: dispatch_us * US,
        activities,
    }
}

pub(crate) fn wait(kind: WaitKind, on: Vec<usize>, residual_us: Nanos) -> HostItem {
    HostItem::Wait {
        kind,
        on,
        residual_ns: residual_us * US,
    }
}

/// The signature id of the step's activity `activity`: what a what-if replaces.
fn id_of(skeleton: &Skeleton, activity: usize) -> String {
    let signature = skeleton.steps[0].activities[activity]
        .signature
        .unwrap_or_else(|| panic!("activity {activity} has a signature"));
    skeleton
        .signature_id(signature)
        .unwrap_or_else(|| panic!("signature {signature} is known"))
        .to_owned()
}

/// The step's simulated activity spans, in µs.
fn spans_us(skeleton: &Skeleton, durations: &Durations) -> Vec<(Nanos, Nanos)> {
    simulate(skeleton, durations).steps[0]
        .activities
        .iter()
        .map(|i| (i.start_ns / US, i.end_ns / US))
        .collect()
}

fn predicted_us(skeleton: &Skeleton, durations: &Durations) -> Nanos {
    simulate(skeleton, durations).steps[0].predicted_ns / US
}

// ---------------------------------------------------------------------------------------
// Hand-written traces
// ---------------------------------------------------------------------------------------

/// One thread, one stream (7), a 100 µs step:
/// - launch 10-15 of k_first, which runs 16-56;
/// - `cudaEventRecord` at 20 (after k_first);
/// - launch 25-30 of k_second, which runs 56-76 (behind k_first);
/// - `cudaEventSynchronize` 35-58: waits for k_first only (56), returns 2 µs later;
/// - `cudaStreamSynchronize` 60-78 on stream 7: waits for k_second (76), returns 2 µs later.
fn event_then_stream_sync() -> Trace {
    Kineto::default()
        .step(0.0, 100.0)
        .call(1, "cudaLaunchKernel", 10.0, 5.0, 1)
        .gpu("kernel", "k_first", 7, 16.0, 40.0, 1)
        .call(1, "cudaEventRecord", 20.0, 1.0, 2)
        .call(1, "cudaLaunchKernel", 25.0, 5.0, 3)
        .gpu("kernel", "k_second", 7, 56.0, 20.0, 3)
        .call(1, "cudaEventSynchronize", 35.0, 23.0, 4)
        .sync_row("Event Sync", -1, 36.0, 20.0, 4)
        .call(1, "cudaStreamSynchronize", 60.0, 18.0, 5)
        .sync_row("Stream Sync", 7, 61.0, 16.0, 5)
        .load()
}

#[test]
fn an_event_sync_waits_for_the_work_before_its_record_and_a_stream_sync_for_the_stream() {
    let skeleton = skeleton_of(&event_then_stream_sync());
    let step = &skeleton.steps[0];
    assert_eq!(step.measured_ns, 100 * US);
    assert_eq!(step.streams.len(), 1);
    // The event record is host time inside the gap 15-25; the event sync waits for
    // k_first (activity 0), the stream sync for k_second (1).
    assert_eq!(
        step.threads[0].items,
        vec![
            gap(10),
            launch(&skeleton, 5, vec![0]),
            gap(10),
            launch(&skeleton, 5, vec![1]),
            gap(5),
            wait(WaitKind::Event, vec![0], 2),
            gap(2),
            wait(WaitKind::Stream, vec![1], 2),
            gap(22),
        ]
    );
    let own = Durations::trace_own();
    assert_eq!(spans_us(&skeleton, &own), vec![(16, 56), (56, 76)]);
    assert_eq!(predicted_us(&skeleton, &own), 100);

    // k_first 60 µs: 16-76, k_second 76-96. The event sync from 35 waits until 76 and
    // returns at 78; 2 µs of host; the stream sync from 80 waits until 96, returns at 98;
    // the last 22 µs end the step at 120.
    let mut longer_first = Durations::trace_own();
    longer_first.set(id_of(&skeleton, 0), 60.0);
    assert_eq!(spans_us(&skeleton, &longer_first), vec![(16, 76), (76, 96)]);
    assert_eq!(predicted_us(&skeleton, &longer_first), 120);

    // k_second 60 µs: 56-116. The event sync does not wait for it: it still returns at 58
    // (a device-wide wait would return at 118); the stream sync from 60 waits until 116,
    // returns at 118; the step ends at 140.
    let mut longer_second = Durations::trace_own();
    longer_second.set(id_of(&skeleton, 1), 60.0);
    let simulated = &simulate(&skeleton, &longer_second).steps[0];
    assert_eq!(simulated.host[0][5].end_ns, 58 * US);
    assert_eq!(simulated.host[0][7].end_ns, 118 * US);
    assert_eq!(simulated.predicted_ns, 140 * US);
}

/// Two streams, one thread, an 80 µs step: k_long on stream 7 (launched 10-15, runs
/// 16-66), k_short on stream 9 (launched 20-25, runs 26-36); a stream sync 30-37 whose
/// `cuda_sync` row names stream 9, then one 40-67 whose row names stream 7.
fn syncs_on_two_streams(with_second_row: bool) -> Trace {
    let trace = Kineto::default()
        .step(0.0, 80.0)
        .call(1, "cudaLaunchKernel", 10.0, 5.0, 1)
        .gpu("kernel", "k_long", 7, 16.0, 50.0, 1)
        .call(1, "cudaLaunchKernel", 20.0, 5.0, 2)
        .gpu("kernel", "k_short", 9, 26.0, 10.0, 2)
        .call(1, "cudaStreamSynchronize", 30.0, 7.0, 3)
        .sync_row("Stream Sync", 9, 31.0, 5.0, 3)
        .call(1, "cudaStreamSynchronize", 40.0, 27.0, 4);
    if with_second_row {
        trace.sync_row("Stream Sync", 7, 41.0, 25.0, 4).load()
    } else {
        trace.load()
    }
}

#[test]
fn a_stream_sync_waits_for_the_stream_its_sync_row_names() {
    let skeleton = skeleton_of(&syncs_on_two_streams(true));
    let step = &skeleton.steps[0];
    assert_eq!(step.streams.len(), 2);
    // k_long is activity 0 (stream 7), k_short activity 1 (stream 9). Each sync returned
    // 1 µs after its stream's kernel ended (37 = 36 + 1, 67 = 66 + 1).
    assert_eq!(
        step.threads[0].items,
        vec![
            gap(10),
            launch(&skeleton, 5, vec![0]),
            gap(5),
            launch(&skeleton, 5, vec![1]),
            gap(5),
            wait(WaitKind::Stream, vec![1], 1),
            gap(3),
            wait(WaitKind::Stream, vec![0], 1),
            gap(13),
        ]
    );
    assert_eq!(predicted_us(&skeleton, &Durations::trace_own()), 80);

    // k_long 20 µs (16-36): the first sync still waits for k_short (36) and returns at 37;
    // the second, from 40, finds k_long done and returns at 41; 13 µs more: 54.
    let mut shorter = Durations::trace_own();
    shorter.set(id_of(&skeleton, 0), 20.0);
    assert_eq!(predicted_us(&skeleton, &shorter), 54);
    // k_long 70 µs (16-86): the second sync returns at 87, the step ends at 100.
    let mut longer = Durations::trace_own();
    longer.set(id_of(&skeleton, 0), 70.0);
    assert_eq!(predicted_us(&skeleton, &longer), 100);

    // Without the second row the trace does not say which stream the second sync waits
    // for: the stream of the thread's last launch (k_short's, 9) is taken, which has
    // finished by 40, so the whole 27 µs call is its own residual.
    let skeleton = skeleton_of(&syncs_on_two_streams(false));
    assert_eq!(
        skeleton.steps[0].threads[0].items[7],
        wait(WaitKind::Stream, vec![1], 27)
    );
    assert_eq!(predicted_us(&skeleton, &Durations::trace_own()), 80);
}

/// Two host threads, a 60 µs step recorded by thread 1:
/// - thread 1 launches kA on stream 7 (10-15; kA runs 16-46), then syncs the device 30-50;
/// - thread 2 launches kB (12-16; kB 17-37) and kC (20-24; kC 37-47, behind kB) on stream 9
///   before that sync starts, and kD (40-44; kD 48-50, 1 µs after kC) after it started.
///
/// The device sync waits for everything issued before it from either thread (kA and kC,
/// the last of each stream: 47) and returns 3 µs later; kD is not its business.
fn two_threads_two_streams() -> Trace {
    Kineto::default()
        .step(0.0, 60.0)
        .call(1, "cudaLaunchKernel", 10.0, 5.0, 1)
        .gpu("kernel", "kA", 7, 16.0, 30.0, 1)
        .call(2, "cudaLaunchKernel", 12.0, 4.0, 2)
        .gpu("kernel", "kB", 9, 17.0, 20.0, 2)
        .call(2, "cudaLaunchKernel", 20.0, 4.0, 3)
        .gpu("kernel", "kC", 9, 37.0, 10.0, 3)
        .call(1, "cudaDeviceSynchronize", 30.0, 20.0, 4)
        .sync_row("Context Sync", -1, 31.0, 18.0, 4)
        .call(2, "cudaLaunchKernel", 40.0, 4.0, 5)
        .gpu("kernel", "kD", 9, 48.0, 2.0, 5)
        .load()
}

#[test]
fn a_device_sync_on_one_thread_waits_for_what_another_thread_issued_before_it() {
    let skeleton = skeleton_of(&two_threads_two_streams());
    let step = &skeleton.steps[0];
    // Activities by start: kA 0, kB 1, kC 2, kD 3; streams 7 then 9.
    assert_eq!(step.threads.len(), 2);
    assert_eq!(step.threads[0].label, "1/1");
    assert_eq!(step.threads[1].label, "1/2");
    assert_eq!(
        step.threads[0].items,
        vec![
            gap(10),
            launch(&skeleton, 5, vec![0]),
            gap(15),
            wait(WaitKind::Device, vec![0, 2], 3),
            gap(10),
        ]
    );
    // Thread 2 runs to its last event (44), not to the step's end.
    assert_eq!(
        step.threads[1].items,
        vec![
            gap(12),
            launch(&skeleton, 4, vec![1]),
            gap(4),
            launch(&skeleton, 4, vec![2]),
            gap(16),
            launch(&skeleton, 4, vec![3]),
        ]
    );
    let own = Durations::trace_own();
    assert_eq!(
        spans_us(&skeleton, &own),
        vec![(16, 46), (17, 37), (37, 47), (48, 50)]
    );
    assert_eq!(predicted_us(&skeleton, &own), 60);

    // kC 40 µs (37-77): kD follows at 78-80; thread 1's sync waits for kC until 77 and
    // returns at 80, then 10 µs: 90. (Waiting for thread 1's own kA only would end the
    // host at 59 and the step with kD at 80.)
    let mut slower = Durations::trace_own();
    slower.set(id_of(&skeleton, 2), 40.0);
    let simulated = &simulate(&skeleton, &slower).steps[0];
    assert_eq!(simulated.activities[3].start_ns, 78 * US);
    assert_eq!(simulated.host[0][3].end_ns, 80 * US);
    assert_eq!(simulated.predicted_ns, 90 * US);

    // kD 40 µs (48-88): thread 1 is not held by it (its sync started before kD was
    // issued): host done at 60, the step ends with kD at 88.
    let mut late = Durations::trace_own();
    late.set(id_of(&skeleton, 3), 40.0);
    let simulated = &simulate(&skeleton, &late).steps[0];
    assert_eq!(simulated.host_end_ns, 60 * US);
    assert_eq!(simulated.predicted_ns, 88 * US);
}

/// One thread, stream 7, a 100 µs step:
/// - `cudaMemsetAsync` 10-14, the memset runs 15-17;
/// - `cudaMemcpyAsync` 20-25 of a pinned host-to-device copy, which runs 26-36;
/// - a kernel launched 30-35 runs 36-56 (right behind the copy);
/// - a synchronous `cudaMemcpy` 40-70 of a device-to-pageable copy: the copy waits on the
///   stream for the kernel, runs 56-64, and the call returns 6 µs after it.
fn memset_copies_and_a_blocking_copy() -> Trace {
    Kineto::default()
        .step(0.0, 100.0)
        .call(1, "cudaMemsetAsync", 10.0, 4.0, 1)
        .gpu("gpu_memset", "Memset (Device)", 7, 15.0, 2.0, 1)
        .call(1, "cudaMemcpyAsync", 20.0, 5.0, 2)
        .gpu(
            "gpu_memcpy",
            "Memcpy HtoD (Pinned -> Device)",
            7,
            26.0,
            10.0,
            2,
        )
        .call(1, "cudaLaunchKernel", 30.0, 5.0, 3)
        .gpu("kernel", "k", 7, 36.0, 20.0, 3)
        .call(1, "cudaMemcpy", 40.0, 30.0, 4)
        .gpu(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pageable)",
            7,
            56.0,
            8.0,
            4,
        )
        .load()
}

#[test]
fn memsets_and_copies_are_on_the_timeline_and_a_blocking_copy_holds_the_host() {
    let skeleton = skeleton_of(&memset_copies_and_a_blocking_copy());
    let step = &skeleton.steps[0];
    let kinds: Vec<ActivityKind> = step.activities.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        vec![
            ActivityKind::Memset,
            ActivityKind::Memcpy,
            ActivityKind::Kernel,
            ActivityKind::Memcpy
        ]
    );
    // The blocking copy is a launch and a wait for its copy. The stream was busy with the
    // kernel when the call started, so the 16 µs before the copy started are the wait for
    // the stream, not host dispatch: the launch costs nothing, the copy waits for the
    // kernel, and the call returns 6 µs after the copy (70 - 64).
    assert_eq!(
        step.threads[0].items,
        vec![
            gap(10),
            launch(&skeleton, 4, vec![0]),
            gap(6),
            launch(&skeleton, 5, vec![1]),
            gap(5),
            launch(&skeleton, 5, vec![2]),
            gap(5),
            launch(&skeleton, 0, vec![3]),
            wait(WaitKind::Copy, vec![3], 6),
            gap(30),
        ]
    );
    let own = Durations::trace_own();
    assert_eq!(
        spans_us(&skeleton, &own),
        vec![(15, 17), (26, 36), (36, 56), (56, 64)]
    );
    let simulated = &simulate(&skeleton, &own).steps[0];
    assert_eq!(simulated.predicted_ns, 100 * US);
    // 2 + 10 + 20 + 8 µs of GPU work, busy 15-17 and 26-64.
    assert_eq!(simulated.kernel_sum_ns, 40 * US);
    assert_eq!(simulated.gpu_busy_ns, 40 * US);

    // The kernel at 5 µs (36-41): the blocking copy, enqueued at 40, starts when the
    // kernel is done (41; its launch let it go 1 µs after the call started, the trace's
    // typical latency, also 41), runs 41-49, the call returns at 55; 30 µs more: 85.
    let mut faster = Durations::trace_own();
    faster.set(id_of(&skeleton, 2), 5.0);
    assert_eq!(
        spans_us(&skeleton, &faster),
        vec![(15, 17), (26, 36), (36, 41), (41, 49)]
    );
    assert_eq!(predicted_us(&skeleton, &faster), 85);

    // The pinned copy at 30 µs (26-56): the kernel 56-76, the blocking copy 76-84; the
    // call returns at 90, the step ends at 120.
    let mut slower_copy = Durations::trace_own();
    slower_copy.set(id_of(&skeleton, 1), 30.0);
    assert_eq!(
        spans_us(&skeleton, &slower_copy),
        vec![(15, 17), (26, 56), (56, 76), (76, 84)]
    );
    assert_eq!(predicted_us(&skeleton, &slower_copy), 120);
}

/// A blocking copy held up by another stream: kX on stream 9 (launched 10-15, runs
/// 16-56) is recorded by `cudaEventRecord` at 20, stream 7 waits for that event
/// (`cudaStreamWaitEvent` at 22, its `cuda_sync` row naming stream 7), and a synchronous
/// `cudaMemcpy` 30-66 on stream 7 copies 57-60, 1 µs after kX ended, then returns 6 µs
/// after the copy. The step is 80 µs.
fn blocking_copy_behind_another_stream() -> Trace {
    Kineto::default()
        .step(0.0, 80.0)
        .call(1, "cudaLaunchKernel", 10.0, 5.0, 1)
        .gpu("kernel", "kX", 9, 16.0, 40.0, 1)
        .call(1, "cudaEventRecord", 20.0, 1.0, 2)
        .call(1, "cudaStreamWaitEvent", 22.0, 1.0, 3)
        .sync_row("Stream Wait Event", 7, 22.5, 0.5, 3)
        .call(1, "cudaMemcpy", 30.0, 36.0, 4)
        .gpu(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pageable)",
            7,
            57.0,
            3.0,
            4,
        )
        .load()
}

#[test]
fn a_blocking_copy_that_waited_for_another_stream_did_not_spend_that_on_the_host() {
    let skeleton = skeleton_of(&blocking_copy_behind_another_stream());
    let step = &skeleton.steps[0];
    // The copy (activity 1) follows kX (0); the 27 µs before it started are the wait for
    // kX, not dispatch: its launch costs nothing, and it starts 1 µs after kX ends.
    assert_eq!(step.activities[1].after, vec![0]);
    assert_eq!(step.activities[1].stream_gap_ns, US);
    assert_eq!(
        step.threads[0].items,
        vec![
            gap(10),
            launch(&skeleton, 5, vec![0]),
            gap(15),
            launch(&skeleton, 0, vec![1]),
            wait(WaitKind::Copy, vec![1], 6),
            gap(14),
        ]
    );
    let own = Durations::trace_own();
    assert_eq!(spans_us(&skeleton, &own), vec![(16, 56), (57, 60)]);
    assert_eq!(predicted_us(&skeleton, &own), 80);

    // kX 10 µs (16-26): done before the copy call even starts, so the copy runs 30-33
    // (the trace's typical latency here is 0: the lower median of kX's 1 µs and the copy's
    // 0) and the call returns at 39, not at 66 as it would if the 27 µs were host time;
    // 14 µs more: 53.
    let mut faster = Durations::trace_own();
    faster.set(id_of(&skeleton, 0), 10.0);
    assert_eq!(spans_us(&skeleton, &faster), vec![(16, 26), (30, 33)]);
    assert_eq!(predicted_us(&skeleton, &faster), 53);
}

/// A stream waiting for an event the trace names: kA on stream 7 (launched 10-15, runs
/// 16-56), `cudaEventRecord` at 20 (correlation 2, on stream 7), kB on stream 9 (launched
/// 25-30, runs 31-41), another `cudaEventRecord` at 32 (correlation 4, on stream 9), then
/// `cudaStreamWaitEvent` at 35 whose `cuda_sync` row says stream 11 waits for the event
/// recorded on stream 7 by correlation 2; kC on stream 11 (launched 40-45) runs 57-67, 1 µs
/// after kA. A device sync 50-70 returns 3 µs after kC; the step is 80 µs.
fn wait_for_a_named_event() -> Trace {
    Kineto::default()
        .step(0.0, 80.0)
        .call(1, "cudaLaunchKernel", 10.0, 5.0, 1)
        .gpu("kernel", "kA", 7, 16.0, 40.0, 1)
        .call(1, "cudaEventRecord", 20.0, 1.0, 2)
        .call(1, "cudaLaunchKernel", 25.0, 5.0, 3)
        .gpu("kernel", "kB", 9, 31.0, 10.0, 3)
        .call(1, "cudaEventRecord", 32.0, 1.0, 4)
        .call(1, "cudaStreamWaitEvent", 35.0, 1.0, 5)
        .wait_row(11, 35.5, 5, 7, 2)
        .call(1, "cudaLaunchKernel", 40.0, 5.0, 6)
        .gpu("kernel", "kC", 11, 57.0, 10.0, 6)
        .call(1, "cudaDeviceSynchronize", 50.0, 20.0, 7)
        .load()
}

#[test]
fn a_stream_wait_follows_the_event_its_sync_row_names() {
    let skeleton = skeleton_of(&wait_for_a_named_event());
    let step = &skeleton.steps[0];
    // kC (2) waits for kA (0), not for kB (1), the thread's last launch before its last
    // record; measured from kA's end, its gap is 1 µs and its latency the typical 1 µs.
    assert_eq!(step.activities[2].after, vec![0]);
    assert_eq!(step.activities[2].stream_gap_ns, US);
    assert_eq!(step.activities[2].latency_ns, US);
    assert_eq!(
        step.threads[0].items,
        vec![
            gap(10),
            launch(&skeleton, 5, vec![0]),
            gap(10),
            launch(&skeleton, 5, vec![1]),
            gap(10),
            launch(&skeleton, 5, vec![2]),
            gap(5),
            wait(WaitKind::Device, vec![0, 1, 2], 3),
            gap(10),
        ]
    );
    let own = Durations::trace_own();
    assert_eq!(
        spans_us(&skeleton, &own),
        vec![(16, 56), (31, 41), (57, 67)]
    );
    assert_eq!(predicted_us(&skeleton, &own), 80);

    // kA 10 µs (16-26): kC goes when launched, 46-56; the sync returns at 59, the step
    // ends at 69.
    let mut faster = Durations::trace_own();
    faster.set(id_of(&skeleton, 0), 10.0);
    assert_eq!(
        spans_us(&skeleton, &faster),
        vec![(16, 26), (31, 41), (46, 56)]
    );
    assert_eq!(predicted_us(&skeleton, &faster), 69);
    // kA 60 µs (16-76): kC 77-87, the sync returns at 90, the step ends at 100.
    let mut slower = Durations::trace_own();
    slower.set(id_of(&skeleton, 0), 60.0);
    assert_eq!(spans_us(&skeleton, &slower)[2], (77, 87));
    assert_eq!(predicted_us(&skeleton, &slower), 100);
}

/// A CUDA graph: one `cudaGraphLaunch` (10-18, correlation 1) runs three kernels on
/// stream 7: g_first 19-29, g_second 30-35, g_third 36-40 (1 µs apart); a stream sync
/// 25-42 waits for the last of them and returns 2 µs after; the step is 50 µs.
fn graph_launch() -> Trace {
    Kineto::default()
        .step(0.0, 50.0)
        .call(1, "cudaGraphLaunch", 10.0, 8.0, 1)
        .gpu("kernel", "g_first", 7, 19.0, 10.0, 1)
        .gpu("kernel", "g_second", 7, 30.0, 5.0, 1)
        .gpu("kernel", "g_third", 7, 36.0, 4.0, 1)
        .call(1, "cudaStreamSynchronize", 25.0, 17.0, 2)
        .sync_row("Stream Sync", 7, 26.0, 15.0, 2)
        .load()
}

#[test]
fn a_graph_launch_is_one_launch_of_all_its_kernels() {
    let skeleton = skeleton_of(&graph_launch());
    let step = &skeleton.steps[0];
    // One launch item for the three kernels (whose signature is the first kernel's).
    assert_eq!(
        step.threads[0].items,
        vec![
            gap(10),
            launch(&skeleton, 8, vec![0, 1, 2]),
            gap(7),
            wait(WaitKind::Stream, vec![2], 2),
            gap(8),
        ]
    );
    // g_first starts 1 µs after the call returned; the others 1 µs after the previous.
    let latencies: Vec<Nanos> = step.activities.iter().map(|a| a.latency_ns).collect();
    let gaps: Vec<Nanos> = step.activities[1..]
        .iter()
        .map(|a| a.stream_gap_ns)
        .collect();
    assert_eq!(latencies[0], US);
    assert_eq!(gaps, vec![US, US]);
    let own = Durations::trace_own();
    assert_eq!(
        spans_us(&skeleton, &own),
        vec![(19, 29), (30, 35), (36, 40)]
    );
    assert_eq!(predicted_us(&skeleton, &own), 50);

    // g_first 20 µs: 19-39, g_second 40-45, g_third 46-50; the sync returns at 52 and
    // 8 µs of host end the step at 60.
    let mut slower = Durations::trace_own();
    slower.set(id_of(&skeleton, 0), 20.0);
    assert_eq!(
        spans_us(&skeleton, &slower),
        vec![(19, 39), (40, 45), (46, 50)]
    );
    assert_eq!(predicted_us(&skeleton, &slower), 60);

    // The graph launch costing 1 µs instead of 8 (the launch's dispatch is its first
    // kernel's signature's): g_first 12-22, g_second 23-28, g_third 29-33; the sync starts
    // at 18, returns at 35; the step ends at 43.
    let mut cheaper = Durations::trace_own();
    cheaper.set_with_dispatch(id_of(&skeleton, 0), 10.0, 1.0);
    assert_eq!(
        spans_us(&skeleton, &cheaper),
        vec![(12, 22), (23, 28), (29, 33)]
    );
    assert_eq!(predicted_us(&skeleton, &cheaper), 43);
}
