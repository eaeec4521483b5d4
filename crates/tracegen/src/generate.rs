//! A whole trace: the header (device properties, distributed info), the process and stream
//! names, steps until the size or step count is reached (each step a variant of the
//! template, drawn by the seed, with fresh ids and later times), and Kineto's closing
//! events and fields (`baseTimeNanoseconds` after `traceEvents`, as Kineto writes it).

use std::io::{self, Write};

use crate::event::{Counter, COUNTERS};
use crate::rng::Rng;
use crate::sink::Sink;
use crate::template::{write_micros, Bases, Template};
use crate::workload::Workload;

/// Step variants (independently jittered durations) the steps are drawn from.
const VARIANTS: usize = 8;
/// Bytes gathered before each write to the output.
const WRITE_CHUNK: usize = 4 << 20;
/// Where the trace's clock starts (ns; the profiler's clock is relative to
/// `baseTimeNanoseconds`, and real traces start about this far in).
const START_NS: u64 = 1_419_247_332_500_684;
const BASE_TIME_NS: u64 = 1_751_410_836_000_000_000;

/// Where each counter starts. Correlation ids start where a process that ran warm-up
/// steps before the profiler started would be (the profilers' own traces start in the
/// thousands to hundreds of thousands); HTA 0.5 also fails on traces whose correlation ids
/// all fit in 16 bits but whose rows do not (it downcasts the column and then stores row
/// numbers in it).
fn first_ids() -> [u64; COUNTERS] {
    let mut ids = [1; COUNTERS];
    ids[Counter::Correlation.index()] = 100_000;
    ids
}

/// The order the events are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// As Kineto writes a whole trace: every step's host ops first (with annotations and
    /// module frames), then every runtime call with the GPU activity it launched, then the
    /// GPU's step spans (the shared traces' order).
    Kineto,
    /// Each step's events together, host then GPU: a trace a reader can finish step by step.
    Steps,
}

/// How long the trace is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    /// Steps until at least this many bytes of JSON are written (the step that reaches
    /// it is the last).
    Bytes(u64),
    /// Exactly this many steps.
    Steps(u64),
}

#[derive(Clone, Debug)]
pub struct Options {
    pub length: Length,
    /// World size; `None` writes no `distributedInfo` (a single-process job).
    pub ranks: Option<u64>,
    pub rank: u64,
    pub seed: u64,
    pub layers: u64,
    /// Gzip with members of about this many JSON bytes.
    pub gzip_member: Option<u64>,
    /// The first step's number (`ProfilerStep#N`).
    pub first_step: u64,
    pub layout: Layout,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            length: Length::Steps(1),
            ranks: None,
            rank: 0,
            seed: 0,
            layers: 24,
            gzip_member: None,
            first_step: 1,
            layout: Layout::Kineto,
        }
    }
}

/// What was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub json_bytes: u64,
    pub steps: u64,
    /// Gzip members (0 when plain).
    pub gzip_members: u64,
}

fn host_pid(rank: u64) -> u64 {
    31_000 + rank * 17
}

/// The workload of this rank: the same model on every rank, a rank-specific speed.
pub fn workload(options: &Options) -> Workload {
    let ranks = options.ranks.unwrap_or(1);
    let mut speed = Rng::new(options.seed ^ 0xA5A5 ^ (options.rank + 1).wrapping_mul(0x9E37_79B9));
    let pid = host_pid(options.rank);
    Workload {
        layers: options.layers,
        batch: 4,
        seq: 2048,
        hidden: 2048,
        heads: 16,
        vocab: 50_304,
        ranks,
        rank: options.rank,
        main_tid: pid,
        autograd_tid: pid + 93,
        slowdown: 1.0 + 0.04 * speed.unit(),
    }
}

/// The step variants of this rank's trace.
pub fn templates(options: &Options) -> Vec<Template> {
    let workload = workload(options);
    let pid = host_pid(options.rank);
    (0..VARIANTS)
        .map(|v| {
            let mut rng = Rng::new(
                options.seed.wrapping_mul(31).wrapping_add(v as u64) ^ (options.rank << 32),
            );
            Template::render(&workload.step(&mut rng), pid)
        })
        .collect()
}

fn header(options: &Options) -> String {
    let mut h = String::from("{\n  \"schemaVersion\": 1,\n");
    h.push_str(concat!(
        "  \"deviceProperties\": [\n",
        "    {\n",
        "    \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85018279936,\n",
        "    \"computeMajor\": 9, \"computeMinor\": 0,\n",
        "    \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n",
        "    \"regsPerBlock\": 65536, \"warpSize\": 32,\n",
        "    \"sharedMemPerBlock\": 49152, \"numSms\": 132,\n",
        "    \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472\n",
        "    }\n",
        "  ],\n",
    ));
    if let Some(world) = options.ranks {
        let ranks: Vec<String> = (0..world).map(|r| r.to_string()).collect();
        h.push_str(&format!(
            "  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {world}, \"pg_count\": 1, \"pg_config\": [{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": {world}, \"ranks\": [{}]}}], \"nccl_version\": \"2.21.5\"}},\n",
            options.rank,
            ranks.join(", ")
        ));
    }
    let mut id = Rng::new(options.seed ^ 0x7ACE);
    h.push_str(&format!(
        concat!(
            "  \"record_shapes\": 1,\n  \"with_stack\": 0,\n  \"with_modules\": 1,\n",
            "  \"profile_memory\": 0,\n  \"with_flops\": 0,\n",
            "  \"cuda_runtime_version\": 12040,\n  \"cuda_driver_version\": 12090,\n  \"cupti_version\": 22,\n",
            "  \"trace_id\": \"{:016X}{:016X}\",\n  \"traceEvents\": [\n"
        ),
        id.next_u64(),
        id.next_u64()
    ));
    let pid = host_pid(options.rank);
    let workload = workload(options);
    let mut meta = |name: &str, pid: u64, tid: u64, key: &str, value: &str| {
        h.push_str(&format!(
            "  {{\n    \"name\": \"{name}\", \"ph\": \"M\", \"ts\": {}, \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      \"{key}\": {value}\n    }}\n  }},\n",
            micros(START_NS)
        ));
    };
    meta("process_name", pid, 0, "name", "\"python3\"");
    meta("process_labels", pid, 0, "labels", "\"CPU\"");
    meta("process_sort_index", pid, 0, "sort_index", &pid.to_string());
    meta("process_name", 0, 0, "name", "\"python3\"");
    meta("process_labels", 0, 0, "labels", "\"GPU 0\"");
    meta(
        "thread_name",
        pid,
        workload.main_tid,
        "name",
        &format!("\"thread {} (python3)\"", workload.main_tid),
    );
    meta(
        "thread_name",
        pid,
        workload.autograd_tid,
        "name",
        &format!("\"thread {} (pt_autograd_0)\"", workload.autograd_tid),
    );
    for stream in [7, 20, 40] {
        meta(
            "thread_name",
            0,
            stream,
            "name",
            &format!("\"stream {stream} \""),
        );
        meta(
            "thread_sort_index",
            0,
            stream,
            "sort_index",
            &stream.to_string(),
        );
    }
    h
}

fn micros(ns: u64) -> String {
    let mut out = Vec::new();
    write_micros(&mut out, ns);
    String::from_utf8_lossy(&out).into_owned()
}

fn footer(end_ns: u64) -> String {
    format!(
        concat!(
            "  {{\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": {start}, \"dur\": {dur},\n",
            "    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n",
            "    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {{\n      \"Op count\": 0\n    }}\n  }},\n",
            "  {{\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n",
            "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": {start}\n  }},\n",
            "  {{\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n",
            "    \"pid\": \"\", \"tid\": \"\", \"ts\": {end}\n  }}\n",
            "  ],\n  \"traceName\": \"replay-tracegen\",\n  \"displayTimeUnit\": \"ms\",\n",
            "  \"baseTimeNanoseconds\": {base}\n}}\n"
        ),
        start = micros(START_NS),
        dur = micros(end_ns - START_NS),
        end = micros(end_ns),
        base = BASE_TIME_NS,
    )
}

/// The steps in order: each with its variant and its numbers. The same walk for the same
/// options, however often it is taken.
fn walk<'t>(
    options: &Options,
    templates: &'t [Template],
) -> impl Iterator<Item = (&'t Template, Bases)> {
    let mut pick = Rng::new(options.seed ^ 0x5EED ^ options.rank);
    let mut bases = Bases {
        time_ns: START_NS + 150_000 + options.rank * 3_217,
        ids: first_ids(),
        step: options.first_step,
    };
    std::iter::from_fn(move || {
        let template = &templates[pick.below(templates.len() as u64) as usize];
        let here = bases;
        bases.time_ns += template.length;
        for (id, used) in bases.ids.iter_mut().zip(template.counters) {
            *id += used;
        }
        bases.step += 1;
        Some((template, here))
    })
}

/// The output, gathered into pieces of about `chunk` bytes.
struct Pieces<W: Write> {
    sink: Sink<W>,
    buffer: Vec<u8>,
    chunk: usize,
    written: u64,
}

impl<W: Write> Pieces<W> {
    fn flush_full(&mut self) -> io::Result<()> {
        if self.buffer.len() >= self.chunk {
            self.sink.write_piece(&self.buffer)?;
            self.written += self.buffer.len() as u64;
            self.buffer.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> io::Result<(u64, u64)> {
        self.sink.write_piece(&self.buffer)?;
        self.written += self.buffer.len() as u64;
        Ok((self.written, self.sink.finish()?))
    }
}

/// Writes the trace to `out` (gzipped when the options say so).
pub fn generate<W: Write>(options: &Options, out: W) -> io::Result<Summary> {
    let sink = match options.gzip_member {
        Some(member) => Sink::gzip(out, member),
        None => Sink::plain(out),
    };
    let templates = templates(options);
    // Gzip members end between pieces: pieces no larger than a member.
    let chunk = options
        .gzip_member
        .map_or(WRITE_CHUNK, |m| WRITE_CHUNK.min(m as usize));
    let mut out = Pieces {
        sink,
        buffer: Vec::with_capacity(chunk + templates[0].approximate_len() * 2),
        chunk,
        written: 0,
    };
    out.buffer.extend_from_slice(header(options).as_bytes());
    let header_bytes = out.buffer.len() as u64;
    let mut steps = 0u64;
    let mut end_ns = 0;
    match options.layout {
        Layout::Steps => {
            for (template, bases) in walk(options, &templates) {
                let done = match options.length {
                    Length::Steps(n) => steps >= n,
                    Length::Bytes(n) => steps > 0 && out.written + out.buffer.len() as u64 >= n,
                };
                end_ns = bases.time_ns;
                if done {
                    break;
                }
                template.steps.write(&mut out.buffer, &bases);
                steps += 1;
                out.flush_full()?;
            }
        }
        Layout::Kineto => {
            // How many steps: counted, not written, as the steps layout would stop.
            let mut total = header_bytes;
            for (template, bases) in walk(options, &templates) {
                let done = match options.length {
                    Length::Steps(n) => steps >= n,
                    Length::Bytes(n) => steps > 0 && total >= n,
                };
                end_ns = bases.time_ns;
                if done {
                    break;
                }
                total += template
                    .sections
                    .iter()
                    .map(|p| p.len_with(&bases) as u64)
                    .sum::<u64>();
                steps += 1;
            }
            for section in 0..3 {
                for (template, bases) in walk(options, &templates).take(steps as usize) {
                    template.sections[section].write(&mut out.buffer, &bases);
                    out.flush_full()?;
                }
            }
        }
    }
    out.buffer.extend_from_slice(footer(end_ns).as_bytes());
    let (json_bytes, gzip_members) = out.finish()?;
    Ok(Summary {
        json_bytes,
        steps,
        gzip_members,
    })
}
