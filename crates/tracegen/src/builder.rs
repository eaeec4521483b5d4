//! The primitives a step is built from, as the PyTorch profiler records them: host ops that
//! nest, `nn.Module` frames, runtime calls that launch kernels, copies and memsets onto
//! streams, and the waits between streams. Each keeps a host clock and a per-stream GPU
//! clock, so every event has a plausible start and duration and every id is fresh.

use std::collections::BTreeMap;

use crate::event::{Counter, Event, Name, Phase, Process, Value, COUNTERS};
use crate::rng::Rng;

/// Streaming multiprocessors of an H100 SXM (for `blocks per SM`).
const SMS: f64 = 132.0;

/// A kernel as the GPU records it.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: &'static str,
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub registers: u64,
    pub shared_memory: u64,
    /// Nominal duration in nanoseconds (jittered per variant).
    pub dur: u64,
    pub stream: u64,
    /// Launched with `cudaLaunchKernelExC` (cluster launches: flash attention) instead of
    /// `cudaLaunchKernel`.
    pub ex: bool,
    /// Extra arguments the kernel event carries (a collective's fields).
    pub extra: Vec<(&'static str, Value)>,
}

/// A memory copy's direction, as its activity names it.
#[derive(Clone, Copy, Debug)]
pub enum Copy {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

impl Copy {
    fn name(self) -> &'static str {
        match self {
            Copy::HostToDevice => "Memcpy HtoD (Pinned -> Device)",
            Copy::DeviceToHost => "Memcpy DtoH (Device -> Pinned)",
            Copy::DeviceToDevice => "Memcpy DtoD (Device -> Device)",
        }
    }
}

/// A GPU activity before it is queued: what it is, where, and for how long (nominal ns).
struct Activity {
    cat: &'static str,
    name: &'static str,
    stream: u64,
    dur: u64,
    args: Vec<(&'static str, Value)>,
}

pub struct Builder<'r> {
    rng: &'r mut Rng,
    host: Vec<Event>,
    gpu: Vec<Event>,
    counters: [u64; COUNTERS],
    /// The host thread's clock (ns after the step's start).
    clock: u64,
    /// When each stream is next free.
    streams: BTreeMap<u64, u64>,
    /// External ids of the open ops, innermost last.
    open_ops: Vec<u64>,
    /// Python ids of the open modules, innermost last.
    open_modules: Vec<u64>,
    /// The thread that records host events now.
    pub tid: u64,
    /// GPU durations are multiplied by this (a slower rank).
    pub slowdown: f64,
}

impl<'r> Builder<'r> {
    pub fn new(rng: &'r mut Rng, tid: u64, slowdown: f64) -> Builder<'r> {
        Builder {
            rng,
            host: Vec::new(),
            gpu: Vec::new(),
            counters: [0; COUNTERS],
            clock: 0,
            streams: BTreeMap::new(),
            open_ops: Vec::new(),
            open_modules: Vec::new(),
            tid,
            slowdown,
        }
    }

    pub fn take(&mut self, counter: Counter) -> u64 {
        let slot = &mut self.counters[counter.index()];
        let value = *slot;
        *slot += 1;
        value
    }

    /// Moves the host clock on by about `ns` (CPU overhead between calls).
    pub fn pause(&mut self, ns: u64) {
        self.clock += self.rng.jitter(ns, 0.3);
    }

    fn open(
        &mut self,
        cat: &'static str,
        name: Name,
        mut args: Vec<(&'static str, Value)>,
    ) -> usize {
        args.push((
            "Ev Idx",
            Value::Id(Counter::EvIdx, self.take(Counter::EvIdx)),
        ));
        self.host.push(Event {
            phase: Phase::Complete { dur: 0 },
            cat,
            name,
            process: Process::Host,
            tid: self.tid,
            ts: self.clock,
            args,
        });
        self.host.len() - 1
    }

    fn close(&mut self, index: usize) {
        let event = &mut self.host[index];
        event.phase = Phase::Complete {
            dur: (self.clock - event.ts).max(1),
        };
    }

    /// A `record_function` range (`user_annotation`): `ProfilerStep#N`, `Optimizer.step#...`.
    pub fn annotation(&mut self, name: Name, body: impl FnOnce(&mut Self)) {
        let external = self.take(Counter::External);
        let args = vec![
            ("External id", Value::Id(Counter::External, external)),
            ("Record function id", Value::Raw("0".into())),
        ];
        let index = self.open("user_annotation", name, args);
        self.pause(1_500);
        self.open_ops.push(external);
        body(self);
        self.open_ops.pop();
        self.pause(1_000);
        self.close(index);
    }

    /// A `cpu_op` with its recorded inputs (`Input Dims`, `Input type`, ...), around `body`.
    pub fn op(
        &mut self,
        name: &str,
        inputs: Vec<(&'static str, Value)>,
        body: impl FnOnce(&mut Self),
    ) {
        let external = self.take(Counter::External);
        let mut args = vec![
            ("External id", Value::Id(Counter::External, external)),
            ("Record function id", Value::Raw("0".into())),
        ];
        args.extend(inputs);
        let index = self.open("cpu_op", Name::Text(name.to_owned()), args);
        self.pause(2_000);
        self.open_ops.push(external);
        body(self);
        self.open_ops.pop();
        self.pause(1_500);
        self.close(index);
    }

    /// An `nn.Module: NAME` frame (`python_function`, with_modules), around `body`.
    pub fn module(&mut self, name: &str, module_id: u64, body: impl FnOnce(&mut Self)) {
        let id = self.take(Counter::Python);
        let parent = match self.open_modules.last() {
            Some(&parent) => Value::Id(Counter::Python, parent),
            None => Value::Raw("null".into()),
        };
        let args = vec![
            ("Python parent id", parent),
            ("Python id", Value::Id(Counter::Python, id)),
            ("Python module id", Value::Raw(module_id.to_string())),
        ];
        let index = self.open(
            "python_function",
            Name::Text(format!("nn.Module: {name}")),
            args,
        );
        self.pause(3_000);
        self.open_modules.push(id);
        body(self);
        self.open_modules.pop();
        self.pause(2_000);
        self.close(index);
    }

    /// A runtime call of about `dur` ns (`cuda_runtime`), returning its correlation id and
    /// when it ends.
    fn runtime(&mut self, name: &str, cbid: u64, dur: u64, flow: bool) -> (u64, u64) {
        let correlation = self.take(Counter::Correlation);
        let mut args = Vec::new();
        if let Some(&external) = self.open_ops.last() {
            args.push(("External id", Value::Id(Counter::External, external)));
        }
        args.push(("cbid", Value::Raw(cbid.to_string())));
        args.push(("correlation", Value::Id(Counter::Correlation, correlation)));
        let start = self.clock;
        self.host.push(Event {
            phase: Phase::Complete { dur },
            cat: "cuda_runtime",
            name: Name::Text(name.to_owned()),
            process: Process::Host,
            tid: self.tid,
            ts: start,
            args,
        });
        if flow {
            self.host.push(Event {
                phase: Phase::FlowStart { correlation },
                cat: "ac2g",
                name: Name::Text("ac2g".into()),
                process: Process::Host,
                tid: self.tid,
                ts: start,
                args: Vec::new(),
            });
        }
        self.clock = start + dur;
        (correlation, start + dur)
    }

    /// The GPU activity of a runtime call: queued behind its stream, after the call.
    fn activity(&mut self, activity: Activity, correlation: u64, called_end: u64) {
        let Activity {
            cat,
            name,
            stream,
            dur,
            mut args,
        } = activity;
        let free = self.streams.get(&stream).copied().unwrap_or(0);
        let start = free.max(called_end + self.rng.jitter(2_500, 0.5));
        let dur = self.rng.jitter((dur as f64 * self.slowdown) as u64, 0.04);
        self.streams.insert(stream, start + dur + 500);
        let mut all = Vec::with_capacity(args.len() + 6);
        if let Some(&external) = self.open_ops.last() {
            all.push(("External id", Value::Id(Counter::External, external)));
        }
        all.push(("device", Value::Raw("0".into())));
        all.push(("context", Value::Raw("1".into())));
        all.push(("stream", Value::Raw(stream.to_string())));
        all.push(("correlation", Value::Id(Counter::Correlation, correlation)));
        all.append(&mut args);
        self.gpu.push(Event {
            phase: Phase::Complete { dur },
            cat,
            name: Name::Text(name.to_owned()),
            process: Process::Gpu,
            tid: stream,
            ts: start,
            args: all,
        });
        self.gpu.push(Event {
            phase: Phase::FlowEnd { correlation },
            cat: "ac2g",
            name: Name::Text("ac2g".into()),
            process: Process::Gpu,
            tid: stream,
            ts: start,
            args: Vec::new(),
        });
    }

    /// `cudaLaunchKernel` (or `cudaLaunchKernelExC`) and the kernel it launches.
    pub fn launch(&mut self, kernel: Kernel) {
        let (call, cbid) = if kernel.ex {
            ("cudaLaunchKernelExC", 430)
        } else {
            ("cudaLaunchKernel", 211)
        };
        let call_dur = self.rng.jitter(5_000, 0.4);
        let (correlation, end) = self.runtime(call, cbid, call_dur, true);
        let blocks: u64 = kernel.grid.iter().product();
        let threads: u64 = kernel.block.iter().product();
        let blocks_per_sm = blocks as f64 / SMS;
        let warps_per_sm = blocks_per_sm * threads.div_ceil(32) as f64;
        let occupancy = (warps_per_sm / 64.0 * 100.0).min(100.0) as u64;
        let mut args = vec![
            ("queued", Value::Raw("0".into())),
            (
                "registers per thread",
                Value::Raw(kernel.registers.to_string()),
            ),
            (
                "shared memory",
                Value::Raw(kernel.shared_memory.to_string()),
            ),
            ("blocks per SM", Value::Raw(format!("{blocks_per_sm:.6}"))),
            ("warps per SM", Value::Raw(format!("{warps_per_sm:.6}"))),
            ("grid", Value::Raw(dim3(kernel.grid))),
            ("block", Value::Raw(dim3(kernel.block))),
            (
                "est. achieved occupancy %",
                Value::Raw(occupancy.to_string()),
            ),
        ];
        args.extend(kernel.extra);
        let activity = Activity {
            cat: "kernel",
            name: kernel.name,
            stream: kernel.stream,
            dur: kernel.dur,
            args,
        };
        self.activity(activity, correlation, end);
        self.pause(1_000);
    }

    /// `cudaMemcpyAsync` and its copy of `bytes` at about `gb_per_s`.
    pub fn memcpy(&mut self, copy: Copy, bytes: u64, stream: u64, gb_per_s: f64) {
        let call_dur = self.rng.jitter(7_000, 0.3);
        let (correlation, end) = self.runtime("cudaMemcpyAsync", 41, call_dur, true);
        let dur = transfer_ns(bytes, gb_per_s);
        let args = vec![
            ("bytes", Value::Raw(bytes.to_string())),
            (
                "memory bandwidth (GB/s)",
                Value::Raw(format!("{:.6}", bytes as f64 / dur as f64)),
            ),
        ];
        let activity = Activity {
            cat: "gpu_memcpy",
            name: copy.name(),
            stream,
            dur,
            args,
        };
        self.activity(activity, correlation, end);
        self.pause(1_000);
    }

    /// `cudaMemsetAsync` and its memset of `bytes`.
    pub fn memset(&mut self, bytes: u64, stream: u64) {
        let call_dur = self.rng.jitter(3_000, 0.3);
        let (correlation, end) = self.runtime("cudaMemsetAsync", 51, call_dur, true);
        let dur = transfer_ns(bytes, 1_200.0);
        let args = vec![
            ("bytes", Value::Raw(bytes.to_string())),
            (
                "memory bandwidth (GB/s)",
                Value::Raw(format!("{:.6}", bytes as f64 / dur as f64)),
            ),
        ];
        let activity = Activity {
            cat: "gpu_memset",
            name: "Memset (Device)",
            stream,
            dur,
            args,
        };
        self.activity(activity, correlation, end);
        self.pause(800);
    }

    /// `cudaStreamWaitEvent`: `stream` waits for the work queued so far on `on`.
    pub fn wait(&mut self, stream: u64, on: u64) {
        let ready = self.streams.get(&on).copied().unwrap_or(0);
        let free = self.streams.entry(stream).or_insert(0);
        *free = (*free).max(ready);
        let dur = self.rng.jitter(2_000, 0.3);
        self.runtime("cudaStreamWaitEvent", 147, dur, false);
        self.pause(500);
    }

    /// `cudaStreamSynchronize`: the host waits until `stream` is done.
    pub fn synchronize(&mut self, stream: u64) {
        let free = self.streams.get(&stream).copied().unwrap_or(0);
        let dur = free.saturating_sub(self.clock) + self.rng.jitter(3_000, 0.3);
        self.runtime("cudaStreamSynchronize", 131, dur, false);
        self.pause(500);
    }

    /// The step: host events in start order, then the GPU's (each stream in time order), the
    /// GPU's `ProfilerStep#N` span over all of them first.
    pub fn finish(mut self, gap: u64) -> crate::event::Step {
        let first = self.gpu.iter().map(|e| e.ts).min().unwrap_or(0);
        let last = self.gpu.iter().map(Event::end).max().unwrap_or(0);
        let step_external = match self.host.first().map(|e| &e.args[0].1) {
            Some(Value::Id(Counter::External, id)) => *id,
            _ => 0,
        };
        let mut events = std::mem::take(&mut self.host);
        events.sort_by_key(|e| e.ts);
        let mut gpu = std::mem::take(&mut self.gpu);
        gpu.sort_by_key(|e| (e.tid, e.ts));
        if !gpu.is_empty() {
            events.push(Event {
                phase: Phase::Complete { dur: last - first },
                cat: "gpu_user_annotation",
                name: Name::Step,
                process: Process::Gpu,
                tid: 7,
                ts: first,
                args: vec![("External id", Value::Id(Counter::External, step_external))],
            });
        }
        let sections = kineto_sections(&events, &gpu);
        events.extend(gpu);
        let end = events
            .iter()
            .map(Event::end)
            .max()
            .unwrap_or(0)
            .max(self.clock);
        crate::event::Step {
            events,
            sections,
            counters: self.counters,
            length: end + gap,
        }
    }
}

/// Kineto's order of a whole trace: every host op (with annotations and module frames), then
/// every runtime call followed by its flow and the activity it launched with that activity's
/// flow, then the GPU's step spans. `host` ends with the GPU step span when there is one.
fn kineto_sections(host: &[Event], gpu: &[Event]) -> [Vec<Event>; 3] {
    let mut ops = Vec::new();
    let mut launches = Vec::new();
    let mut steps = Vec::new();
    let mut launched: std::collections::HashMap<u64, Vec<&Event>> =
        std::collections::HashMap::new();
    for event in gpu {
        if let Some(c) = event.correlation() {
            launched.entry(c).or_default().push(event);
        }
    }
    for event in host {
        match (event.process, event.cat) {
            (Process::Gpu, _) => steps.push(event.clone()),
            (_, "cuda_runtime") => {
                launches.push(event.clone());
                if let Some(activity) = event.correlation().and_then(|c| launched.get(&c)) {
                    launches.extend(activity.iter().map(|e| (*e).clone()));
                }
            }
            // The flow's start follows its runtime call, as above.
            (_, "ac2g") => {
                let at = launches.iter().position(|e| {
                    e.cat == "cuda_runtime" && e.correlation() == event.correlation()
                });
                match at {
                    Some(i) => launches.insert(i + 1, event.clone()),
                    None => launches.push(event.clone()),
                }
            }
            _ => ops.push(event.clone()),
        }
    }
    [ops, launches, steps]
}

fn dim3(d: [u64; 3]) -> String {
    format!("[{}, {}, {}]", d[0], d[1], d[2])
}

fn transfer_ns(bytes: u64, gb_per_s: f64) -> u64 {
    ((bytes as f64 / gb_per_s) as u64).max(800)
}
