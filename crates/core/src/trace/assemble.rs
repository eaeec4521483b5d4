//! Turning raw events into the typed model, one at a time, as the parser streams them.

use std::path::Path;

use super::buffer;
use super::contents::{EventCounts, Platform, TraceMetadata};
use super::error::TraceError;
use super::event::{
    micros_text_to_nanos, Category, Event, EventArgs, ExecutionId, ExternalId, ExternalIdKey,
    RecordedInputs, WaitOn, MODULE_PREFIX,
};
use super::raw::{RawArgs, RawEvent, RawExecutionId};
use super::strings::{StrId, StringTable};

/// Accumulates the kept events of a trace while it is parsed.
pub struct TraceAssembler<'p> {
    path: &'p Path,
    pub events: Vec<Event>,
    pub strings: StringTable,
    pub counts: EventCounts,
    pub metadata: TraceMetadata,
    pub saw_trace_events: bool,
    /// A problem found inside an event. Parsing is aborted through serde with a
    /// placeholder error, and this, more precise, error is reported instead.
    pub failure: Option<TraceError>,
    saw_hip_api: bool,
    /// Events already handed on ([`Self::drain_into`]) held a GPU activity.
    drained_gpu_activity: bool,
}

/// Where a streamed trace's events go instead of into memory: called with each block's
/// events (in file order, string ids of the trace's table), which it may keep or drop.
pub type EventSink<'s> = dyn FnMut(&[Event], &StringTable) -> Result<(), TraceError> + 's;

impl<'p> TraceAssembler<'p> {
    pub fn new(path: &'p Path, expected_json_bytes: usize) -> Self {
        // Kineto traces run 230-500 bytes of JSON per event, and about two thirds of the
        // events are kept. Reserving for more than that costs address space only (pages are
        // given memory when first written), and spares the doubling of a large vector; its
        // pages are huge where the kernel allows, as writing the events into a few
        // thousand fresh small pages was a tenth of `predict`'s time on the cudagraph trace.
        let estimated_events = expected_json_bytes / 200;
        TraceAssembler {
            path,
            events: buffer::with_capacity(estimated_events),
            strings: StringTable::default(),
            counts: EventCounts::default(),
            metadata: TraceMetadata::default(),
            saw_trace_events: false,
            failure: None,
            saw_hip_api: false,
            drained_gpu_activity: false,
        }
    }

    /// Takes one entry of `traceEvents`. `index` is its position, for error messages.
    pub fn push(&mut self, index: usize, raw: &RawEvent<'_>) -> Result<(), TraceError> {
        self.counts.total += 1;
        let category = raw
            .cat
            .as_deref()
            .map(Category::from_trace_name)
            .unwrap_or(Category::Unknown);
        let phase = raw.ph.as_deref();
        if matches!(phase, Some("s") | Some("f") | Some("t")) {
            self.counts.flows += 1;
            return Ok(());
        }
        if !category.is_kept() {
            self.counts.ignored += 1;
            return Ok(());
        }
        match phase {
            Some("X") => {}
            Some(_) => {
                // Instant or counter events of a kept category carry no duration.
                self.counts.ignored += 1;
                return Ok(());
            }
            None => return Err(self.missing(index, category, raw.name.as_deref(), "ph")),
        }
        let Some(name) = raw.name.as_deref() else {
            return Err(self.missing(index, category, None, "name"));
        };
        if category == Category::PythonFunction && !name.starts_with(MODULE_PREFIX) {
            self.counts.ignored += 1;
            return Ok(());
        }
        let pid = match &raw.pid {
            Some(pid) => self.execution_id(pid)?,
            None => return Err(self.missing(index, category, Some(name), "pid")),
        };
        let tid = match &raw.tid {
            Some(tid) => self.execution_id(tid)?,
            None => return Err(self.missing(index, category, Some(name), "tid")),
        };
        let Some(ts) = raw.ts else {
            return Err(self.missing(index, category, Some(name), "ts"));
        };
        let Some(dur) = raw.dur else {
            return Err(self.missing(index, category, Some(name), "dur"));
        };
        let ts_ns = self.nanos(ts, index, category, name, "ts")?;
        let dur_ns = self.nanos(dur, index, category, name, "dur")?;
        if dur_ns < 0 {
            return Err(self.invalid(index, category, name, "dur", "negative duration".into()));
        }
        if category.is_launch_call() && name.starts_with("hip") {
            self.saw_hip_api = true;
        }
        let name = self.intern(name)?;
        let args = match &raw.args {
            Some(args) => self.args(args)?,
            None => EventArgs::default(),
        };
        self.events.push(Event {
            category,
            name,
            pid,
            tid,
            ts_ns,
            dur_ns,
            args,
        });
        self.counts.kept += 1;
        Ok(())
    }

    /// Appends what `later` assembled from the events that follow this assembler's in the
    /// file (a chunk parsed on another core). Its strings are interned here in the order
    /// `later` first saw them, so every id comes out as a single pass would have numbered it.
    pub fn append(&mut self, mut later: TraceAssembler<'_>) -> Result<(), TraceError> {
        self.adopt_strings_of(&mut later)?;
        self.events.append(&mut later.events);
        self.add_counts_of(&later);
        Ok(())
    }

    /// [`Self::append`] for a streamed trace: `later`'s events, their strings renamed in
    /// place, go straight to `sink` (after any events still held here, in file order)
    /// instead of being moved onto this assembler's first.
    pub fn append_into(
        &mut self,
        mut later: TraceAssembler<'_>,
        sink: &mut EventSink<'_>,
    ) -> Result<(), TraceError> {
        self.drain_into(sink)?;
        self.adopt_strings_of(&mut later)?;
        self.add_counts_of(&later);
        if later.events.is_empty() {
            return Ok(());
        }
        self.drained_gpu_activity |= later.events.iter().any(|e| e.category.is_gpu_activity());
        sink(&later.events, &self.strings)
    }

    /// Interns `later`'s strings here and renames its events' strings to these ids.
    fn adopt_strings_of(&mut self, later: &mut TraceAssembler<'_>) -> Result<(), TraceError> {
        let mut ids = Vec::with_capacity(later.strings.len());
        for (_, text) in later.strings.iter() {
            ids.push(self.intern(text)?);
        }
        let map = |id: StrId| ids.get(id.index()).copied().unwrap_or(id);
        let map_execution = |id: ExecutionId| match id {
            ExecutionId::Label(label) => ExecutionId::Label(map(label)),
            number => number,
        };
        let map_input = |id: Option<StrId>| id.map(map);
        for event in &mut later.events {
            event.name = map(event.name);
            event.pid = map_execution(event.pid);
            event.tid = map_execution(event.tid);
            let inputs = &mut event.args.inputs;
            inputs.dims = map_input(inputs.dims);
            inputs.types = map_input(inputs.types);
            inputs.strides = map_input(inputs.strides);
            inputs.concrete = map_input(inputs.concrete);
        }
        Ok(())
    }

    fn add_counts_of(&mut self, later: &TraceAssembler<'_>) {
        self.counts.total += later.counts.total;
        self.counts.kept += later.counts.kept;
        self.counts.flows += later.counts.flows;
        self.counts.ignored += later.counts.ignored;
        self.saw_hip_api |= later.saw_hip_api;
    }

    /// Hands the events assembled so far to `sink` and forgets them (a streamed trace
    /// whose events are folded as they come).
    pub fn drain_into(&mut self, sink: &mut EventSink<'_>) -> Result<(), TraceError> {
        if self.events.is_empty() {
            return Ok(());
        }
        self.drained_gpu_activity |= self.events.iter().any(|e| e.category.is_gpu_activity());
        sink(&self.events, &self.strings)?;
        self.events.clear();
        Ok(())
    }

    /// The platform, once every event has been seen.
    pub fn platform(&self) -> Platform {
        let has_gpu_activity =
            self.drained_gpu_activity || self.events.iter().any(|e| e.category.is_gpu_activity());
        let amd_device = self
            .metadata
            .device_properties
            .as_ref()
            .and_then(|props| props.as_array())
            .is_some_and(|devices| {
                devices.iter().any(|d| {
                    d.get("name")
                        .and_then(|n| n.as_str())
                        .is_some_and(|n| n.contains("AMD") || n.contains("Instinct"))
                })
            });
        if !has_gpu_activity {
            Platform::Cpu
        } else if self.saw_hip_api || amd_device || self.metadata.roctracer_version.is_some() {
            Platform::Rocm
        } else {
            Platform::Cuda
        }
    }

    fn args(&mut self, raw: &RawArgs<'_>) -> Result<EventArgs, TraceError> {
        let external_id = match (raw.external_id.0, raw.external_id_lowercase.0) {
            (Some(value), _) => Some(ExternalId {
                value,
                key: ExternalIdKey::Capitalised,
            }),
            (None, Some(value)) => Some(ExternalId {
                value,
                key: ExternalIdKey::Lowercase,
            }),
            (None, None) => None,
        };
        let inputs = RecordedInputs {
            dims: self.intern_raw(raw.input_dims)?,
            types: self.intern_raw(raw.input_types)?,
            strides: self.intern_raw(raw.input_strides)?,
            concrete: self.intern_raw(raw.concrete_inputs)?,
        };
        Ok(EventArgs {
            external_id,
            correlation: raw.correlation.0,
            stream: raw.stream.0,
            device: raw.device.0,
            bytes: raw
                .bytes
                .0
                .or(raw.size.0)
                .and_then(|b| u64::try_from(b).ok()),
            grid: raw.grid.0,
            block: raw.block.0,
            callback_id: raw.cbid.0.or(raw.cid.0),
            sequence_number: raw.sequence_number.0,
            forward_thread_id: raw.forward_thread_id.0,
            // 0 is what the profiler writes when no observer asked for ids.
            record_function_id: raw.record_function_id.0.filter(|&id| id > 0),
            // kineto writes -1 where it does not know.
            wait_on: match (raw.wait_on_stream.0, raw.wait_on_event_record.0) {
                (Some(stream), Some(record_correlation))
                    if stream >= 0 && record_correlation >= 0 =>
                {
                    Some(Box::new(WaitOn {
                        stream,
                        record_correlation,
                    }))
                }
                _ => None,
            },
            inputs,
        })
    }

    fn intern_raw(&mut self, raw: Option<&str>) -> Result<Option<StrId>, TraceError> {
        match raw {
            Some(raw) => self.intern(raw).map(Some),
            None => Ok(None),
        }
    }

    pub fn intern(&mut self, text: &str) -> Result<StrId, TraceError> {
        self.strings
            .intern(text)
            .map_err(|_| TraceError::TooManyStrings {
                path: self.path.to_path_buf(),
                limit: StringTable::CAPACITY,
            })
    }

    fn execution_id(&mut self, raw: &RawExecutionId<'_>) -> Result<ExecutionId, TraceError> {
        Ok(match raw {
            RawExecutionId::Number(n) => ExecutionId::Number(*n),
            RawExecutionId::Text(text) => match text.parse::<i64>() {
                Ok(n) => ExecutionId::Number(n),
                Err(_) => ExecutionId::Label(self.intern(text)?),
            },
        })
    }

    fn nanos(
        &self,
        value: &str,
        index: usize,
        category: Category,
        name: &str,
        field: &'static str,
    ) -> Result<i64, TraceError> {
        micros_text_to_nanos(value).ok_or_else(|| {
            self.invalid(
                index,
                category,
                name,
                field,
                format!("{value} is not a number of microseconds"),
            )
        })
    }

    fn missing(
        &self,
        index: usize,
        category: Category,
        name: Option<&str>,
        field: &'static str,
    ) -> TraceError {
        TraceError::MissingField {
            path: self.path.to_path_buf(),
            index,
            category: category.label(),
            name: name.unwrap_or("").to_owned(),
            field,
        }
    }

    fn invalid(
        &self,
        index: usize,
        category: Category,
        name: &str,
        field: &'static str,
        reason: String,
    ) -> TraceError {
        TraceError::InvalidField {
            path: self.path.to_path_buf(),
            index,
            category: category.label(),
            name: name.to_owned(),
            field,
            reason,
        }
    }
}
