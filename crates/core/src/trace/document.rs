//! The trace document's root visitor: the top-level keys into the trace's metadata, the
//! `traceEvents` array streamed event by event into an assembler, and where the parser is
//! (for error messages, and for [`super::chunked`] to know whether a cut fell between two
//! events).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::assemble::TraceAssembler;
use super::raw::{LenientInt, RawEvent, RawEventSeed, RawHarnessMetadata};

/// A capture harness's PyTorch version stands in where the trace names none itself.
pub(super) fn finish_metadata(assembler: &mut TraceAssembler<'_>, harness: Option<String>) {
    if assembler.metadata.pytorch_version.is_none() {
        assembler.metadata.pytorch_version = harness;
    }
}

/// Parses a whole document (or, for [`super::chunked`], the part of one before a cut) with the
/// root visitor. `harness_pytorch_version` receives the version a top-level `metadata`
/// object names, applied by [`finish_metadata`] once the whole file is read.
pub(super) fn parse_document<'de, R: serde_json::de::Read<'de>>(
    mut deserializer: serde_json::Deserializer<R>,
    assembler: &mut TraceAssembler<'_>,
    position: &mut ParsePosition,
    harness_pytorch_version: &mut Option<String>,
) -> Result<(), serde_json::Error> {
    (&mut deserializer)
        .deserialize_map(RootVisitor {
            assembler,
            position,
            harness_pytorch_version,
        })
        .and_then(|()| deserializer.end())
}

/// Where in the document the parser was, to say which event a type error is in.
#[derive(Default)]
pub(super) struct ParsePosition {
    pub in_trace_events: bool,
    /// Inside an entry of `traceEvents` (its first byte reached, whatever the entry is, and
    /// its end not yet): tells [`super::chunked`] whether the text before a cut ended between
    /// two entries. Set as the entry starts, not when an object opens: a cut inside an entry
    /// that is a string (`["\",{},` then the cut) also ends the text early, and is refused.
    pub in_event: bool,
    pub event_index: usize,
}

struct RootVisitor<'a, 'p> {
    assembler: &'a mut TraceAssembler<'p>,
    position: &'a mut ParsePosition,
    harness_pytorch_version: &'a mut Option<String>,
}

impl<'de> Visitor<'de> for RootVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kineto trace object with a `traceEvents` array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traceEvents" => {
                    self.position.in_trace_events = true;
                    map.next_value_seed(EventsSeed {
                        assembler: &mut *self.assembler,
                        position: &mut *self.position,
                    })?;
                    self.position.in_trace_events = false;
                    self.assembler.saw_trace_events = true;
                }
                "schemaVersion" => {
                    self.assembler.metadata.schema_version = map.next_value::<LenientInt>()?.0
                }
                "deviceProperties" => {
                    self.assembler.metadata.device_properties = Some(map.next_value()?)
                }
                "distributedInfo" => {
                    self.assembler.metadata.distributed_info = Some(map.next_value()?)
                }
                "cuda_runtime_version" => {
                    self.assembler.metadata.cuda_runtime_version = map.next_value::<LenientInt>()?.0
                }
                "cuda_driver_version" => {
                    self.assembler.metadata.cuda_driver_version = map.next_value::<LenientInt>()?.0
                }
                "cupti_version" => {
                    self.assembler.metadata.cupti_version = map.next_value::<LenientInt>()?.0
                }
                "roctracer_version" => {
                    self.assembler.metadata.roctracer_version = Some(map.next_value()?)
                }
                "baseTimeNanoseconds" => {
                    self.assembler.metadata.base_time_ns = map.next_value::<LenientInt>()?.0
                }
                "replayProfilerOverheadUsPerOp" => {
                    let value: serde_json::Value = map.next_value()?;
                    self.assembler.metadata.profiler_overhead_us_per_op =
                        value.as_f64().filter(|v| v.is_finite() && *v >= 0.0);
                }
                "replayFusionGroups" => {
                    self.assembler.metadata.fusion_groups = Some(map.next_value()?);
                }
                "traceName" => {
                    let value: serde_json::Value = map.next_value()?;
                    self.assembler.metadata.trace_name = value.as_str().map(str::to_owned);
                }
                "pytorch_version" | "torch_version" => {
                    let value: serde_json::Value = map.next_value()?;
                    self.assembler.metadata.pytorch_version = value.as_str().map(str::to_owned);
                }
                "metadata" => {
                    let raw: &RawValue = map.next_value()?;
                    *self.harness_pytorch_version = pytorch_version_from_harness(raw);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The PyTorch version a capture harness wrote in `metadata`: `torch_env_info` first
/// (it has the build suffix, e.g. `2.6.0+cu124`), else a `torch==X` pip package. Lenient:
/// a `metadata` object of any other shape just yields no version.
fn pytorch_version_from_harness(raw: &RawValue) -> Option<String> {
    let metadata: RawHarnessMetadata = serde_json::from_str(raw.get()).ok()?;
    let system = metadata.system.unwrap_or_default();
    if let Some(version) = system.torch_env_info.and_then(|info| info.torch_version) {
        return Some(version.into_owned());
    }
    system
        .pip_packages
        .into_iter()
        .chain(metadata.pip_packages)
        .flatten()
        .find_map(|package| package.strip_prefix("torch==").map(str::to_owned))
}

struct EventsSeed<'a, 'p> {
    assembler: &'a mut TraceAssembler<'p>,
    position: &'a mut ParsePosition,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the `traceEvents` array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            let mut slot = RawEvent::default();
            let seed = TrackedEventSeed {
                slot: &mut slot,
                in_event: &mut self.position.in_event,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            self.position.in_event = false;
            let index = self.position.event_index;
            if let Err(failure) = self.assembler.push(index, &slot) {
                self.assembler.failure = Some(failure);
                return Err(de::Error::custom("event rejected"));
            }
            self.position.event_index += 1;
        }
    }
}

/// An event, noting in `in_event` that its entry has begun (serde_json asks the seed only
/// once it has found the entry's first byte: text that ends between entries never reaches it).
struct TrackedEventSeed<'s, 'a> {
    slot: &'s mut RawEvent<'a>,
    in_event: &'s mut bool,
}

impl<'de> DeserializeSeed<'de> for TrackedEventSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        *self.in_event = true;
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TrackedEventSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        RawEventSeed { slot: self.slot }.visit_map(map)
    }
}
