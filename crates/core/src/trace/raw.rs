//! The JSON shape of a trace event, deserialised without copying.
//!
//! Strings borrow from the file's bytes (`Cow` falls back to an owned copy only for a
//! string with escapes) and the recorded input shapes and timestamps are kept as raw JSON
//! text, so parsing an event allocates nothing. Events are filled in place by hand-written
//! visitors rather than derived ones: that avoids moving a few hundred bytes of struct per
//! event through serde's return values, and lets the `args` of events that will be ignored
//! anyway (flows, python frames, instant events) be skipped without parsing their keys.
//! Fields whose type varies between eras or tools (`pid`/`tid`, `stream`, `size`...) go
//! through lenient visitors.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::event::{Category, MODULE_PREFIX};

/// One entry of `traceEvents`, as written.
#[derive(Debug, Default, PartialEq)]
pub struct RawEvent<'a> {
    pub ph: Option<Cow<'a, str>>,
    pub cat: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub pid: Option<RawExecutionId<'a>>,
    pub tid: Option<RawExecutionId<'a>>,
    /// Kept as the value's JSON text (a number, as written): see
    /// [`crate::trace::event::micros_text_to_nanos`].
    pub ts: Option<&'a str>,
    pub dur: Option<&'a str>,
    pub args: Option<RawArgs<'a>>,
}

impl RawEvent<'_> {
    /// Whether this event's `args` can matter, judging from the keys seen so far. Kineto
    /// writes `ph`, `cat` and `name` before `args`; when it does not, args are parsed.
    pub(super) fn wants_args(&self) -> bool {
        if matches!(self.ph.as_deref(), Some("s" | "f" | "t" | "M" | "i" | "C")) {
            return false;
        }
        match self.cat.as_deref().map(Category::from_trace_name) {
            Some(Category::PythonFunction) => self
                .name
                .as_deref()
                .is_none_or(|name| name.starts_with(MODULE_PREFIX)),
            Some(category) => category.is_kept(),
            None => true,
        }
    }
}

/// Deserialises one event into a reused slot.
pub struct RawEventSeed<'s, 'a> {
    pub slot: &'s mut RawEvent<'a>,
}

impl<'de> DeserializeSeed<'de> for RawEventSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RawEventSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let slot = self.slot;
        while let Some(JsonText(key)) = map.next_key::<JsonText<'de>>()? {
            match key.as_ref() {
                "ph" => slot.ph = map.next_value::<Option<JsonText<'de>>>()?.map(|t| t.0),
                "cat" => slot.cat = map.next_value::<Option<JsonText<'de>>>()?.map(|t| t.0),
                "name" => slot.name = map.next_value::<Option<JsonText<'de>>>()?.map(|t| t.0),
                "pid" => slot.pid = map.next_value()?,
                "tid" => slot.tid = map.next_value()?,
                "ts" => slot.ts = Some(map.next_value::<&RawValue>()?.get()),
                "dur" => slot.dur = Some(map.next_value::<&RawValue>()?.get()),
                "args" if slot.wants_args() => {
                    let args = slot.args.get_or_insert_with(RawArgs::default);
                    map.next_value_seed(RawArgsSeed { args })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The `args` keys classification reads; the others are skipped unparsed.
#[derive(Debug, Default, PartialEq)]
pub struct RawArgs<'a> {
    pub external_id: LenientInt,
    pub external_id_lowercase: LenientInt,
    pub correlation: LenientInt,
    pub stream: LenientInt,
    pub device: LenientInt,
    pub bytes: LenientInt,
    /// ROCm `hipMemcpy*` runtime calls record the copy size here, as a string.
    pub size: LenientInt,
    pub grid: LenientDim3,
    pub block: LenientDim3,
    pub cbid: LenientInt,
    /// ROCm's name for the callback id.
    pub cid: LenientInt,
    pub sequence_number: LenientInt,
    pub forward_thread_id: LenientInt,
    /// `Record function id`: the op's id in an Execution Trace recorded with it.
    pub record_function_id: LenientInt,
    /// `cuda_sync` rows of `cudaStreamWaitEvent`: the stream the event was recorded on, and
    /// the correlation id of its `cudaEventRecord` (-1 where unknown).
    pub wait_on_stream: LenientInt,
    pub wait_on_event_record: LenientInt,
    /// The recorded inputs, each as its value's JSON text.
    pub input_dims: Option<&'a str>,
    pub input_types: Option<&'a str>,
    pub input_strides: Option<&'a str>,
    pub concrete_inputs: Option<&'a str>,
}

struct RawArgsSeed<'s, 'a> {
    args: &'s mut RawArgs<'a>,
}

impl<'de> DeserializeSeed<'de> for RawArgsSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RawArgsSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an `args` object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let args = self.args;
        while let Some(JsonText(key)) = map.next_key::<JsonText<'de>>()? {
            match key.as_ref() {
                "External id" => args.external_id = map.next_value()?,
                "external id" => args.external_id_lowercase = map.next_value()?,
                "correlation" => args.correlation = map.next_value()?,
                "stream" => args.stream = map.next_value()?,
                "device" => args.device = map.next_value()?,
                "bytes" => args.bytes = map.next_value()?,
                "size" => args.size = map.next_value()?,
                "grid" => args.grid = map.next_value()?,
                "block" => args.block = map.next_value()?,
                "cbid" => args.cbid = map.next_value()?,
                "cid" => args.cid = map.next_value()?,
                "Sequence number" => args.sequence_number = map.next_value()?,
                "Fwd thread id" => args.forward_thread_id = map.next_value()?,
                "Record function id" => args.record_function_id = map.next_value()?,
                "wait_on_stream" => args.wait_on_stream = map.next_value()?,
                "wait_on_cuda_event_record_corr_id" => {
                    args.wait_on_event_record = map.next_value()?
                }
                "Input Dims" => args.input_dims = Some(map.next_value::<&RawValue>()?.get()),
                "Input type" => args.input_types = Some(map.next_value::<&RawValue>()?.get()),
                "Input Strides" => args.input_strides = Some(map.next_value::<&RawValue>()?.get()),
                "Concrete Inputs" => {
                    args.concrete_inputs = Some(map.next_value::<&RawValue>()?.get())
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    // `args` that is not an object (never written by a profiler) carries nothing we read.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// A JSON string, borrowed from the input unless it had escapes.
pub struct JsonText<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for JsonText<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = JsonText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// A `pid`/`tid`: integer or string.
#[derive(Debug, PartialEq)]
pub enum RawExecutionId<'a> {
    Number(i64),
    Text(Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for RawExecutionId<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl<'de> Visitor<'de> for IdVisitor {
            type Value = RawExecutionId<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(RawExecutionId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v)
                    .map(RawExecutionId::Number)
                    .map_err(|_| E::custom("id does not fit in 64 bits"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                // Some exporters write ids as floats; an integral one is still an id.
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Ok(RawExecutionId::Number(v as i64))
                } else {
                    Err(E::custom("id is a non-integral number"))
                }
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(RawExecutionId::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(RawExecutionId::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(RawExecutionId::Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// An integer that some tools write as a number, some as a decimal or `0x` hex string
/// (ROCm: `"stream": "0x0"`, `"size": "2560"`). Anything else reads as absent rather than
/// failing the whole file: these fields are informative, never structural.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LenientInt(pub Option<i64>);

impl<'de> Deserialize<'de> for LenientInt {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LenientIntVisitor;
        impl<'de> Visitor<'de> for LenientIntVisitor {
            type Value = LenientInt;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LenientInt(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LenientInt(i64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                let integral = v.fract() == 0.0 && v.abs() < 9.0e15;
                Ok(LenientInt(integral.then_some(v as i64)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LenientInt(parse_integer_text(v)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LenientInt(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LenientInt(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientInt(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientInt(None))
            }
        }
        deserializer.deserialize_any(LenientIntVisitor)
    }
}

/// Decimal or `0x`-prefixed hexadecimal integer text.
pub fn parse_integer_text(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16)
            .ok()
            .and_then(|v| i64::try_from(v).ok())
    } else {
        text.parse::<i64>().ok()
    }
}

/// A `[x, y, z]` launch dimension; anything else reads as absent.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LenientDim3(pub Option<[u32; 3]>);

impl<'de> Deserialize<'de> for LenientDim3 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Dim3Visitor;
        impl<'de> Visitor<'de> for Dim3Visitor {
            type Value = LenientDim3;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of three integers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut dims = [1u32; 3];
                let mut valid = true;
                let mut count = 0usize;
                while let Some(LenientInt(value)) = seq.next_element::<LenientInt>()? {
                    match (
                        dims.get_mut(count),
                        value.and_then(|v| u32::try_from(v).ok()),
                    ) {
                        (Some(slot), Some(v)) => *slot = v,
                        _ => valid = false,
                    }
                    count += 1;
                }
                Ok(LenientDim3((valid && count == 3).then_some(dims)))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LenientDim3(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LenientDim3(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LenientDim3(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(LenientDim3(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LenientDim3(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LenientDim3(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientDim3(None))
            }
        }
        deserializer.deserialize_any(Dim3Visitor)
    }
}

/// The parts of a top-level `metadata` object (written by some capture harnesses, e.g.
/// the one that made the H100 traces) that can tell the PyTorch version.
#[derive(Deserialize, Default)]
pub struct RawHarnessMetadata<'a> {
    #[serde(borrow, default)]
    pub system: Option<RawHarnessSystem<'a>>,
    #[serde(borrow, default)]
    pub pip_packages: Option<Vec<Cow<'a, str>>>,
}

#[derive(Deserialize, Default)]
pub struct RawHarnessSystem<'a> {
    #[serde(borrow, default)]
    pub torch_env_info: Option<RawTorchEnvInfo<'a>>,
    #[serde(borrow, default)]
    pub pip_packages: Option<Vec<Cow<'a, str>>>,
}

/// `torch.utils.collect_env` output.
#[derive(Deserialize, Default)]
pub struct RawTorchEnvInfo<'a> {
    #[serde(borrow, default)]
    pub torch_version: Option<Cow<'a, str>>,
}
