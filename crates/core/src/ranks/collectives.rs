//! A rank's collective kernels (NCCL/RCCL), with what the profiler records about each: the
//! collective (`Collective name`), its process group (`Process Group Name`, `Process Group
//! Ranks`) and, on newer PyTorch, its sequence number in the group (`Seq`).
//!
//! The trace reader keeps none of these arguments (classification and the timeline do not
//! need them), so the file is read once more here: its JSON text is held once (as the
//! in-memory trace reader holds it), and only the collective kernels are kept of it.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::error::RankError;
use crate::trace::event::micros_text_to_nanos;
use crate::trace::link::is_collective_kernel;

/// One collective kernel of a rank.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveKernel {
    /// The kernel's name.
    pub name: String,
    /// `Collective name` (`allreduce`, `broadcast`), when recorded.
    pub collective: Option<String>,
    /// `Process Group Name`, when recorded.
    pub process_group: Option<String>,
    /// `Process Group Ranks`, when recorded.
    pub group_ranks: Option<Vec<u32>>,
    /// `Seq`: the collective's sequence number in its process group, when recorded.
    pub seq: Option<i64>,
    /// Start and end on the absolute clock (`baseTimeNanoseconds` + `ts`), in ns.
    pub start_ns: i64,
    pub end_ns: i64,
}

/// The collective kernels of one rank's trace, in time order.
pub fn read(path: &Path) -> Result<Vec<CollectiveKernel>, RankError> {
    let fail = |message: String| RankError::Collectives {
        path: path.to_path_buf(),
        message,
    };
    let mut file = File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .map_err(|e| fail(format!("cannot decompress: {e}")))?;
        bytes = text;
    }
    let mut deserializer = serde_json::Deserializer::from_slice(&bytes);
    let mut found = Found::default();
    Document(&mut found)
        .deserialize(&mut deserializer)
        .map_err(|e| fail(e.to_string()))?;
    let base = found.base_time_ns.unwrap_or(0);
    let mut kernels: Vec<CollectiveKernel> = found
        .rows
        .into_iter()
        .map(|mut k| {
            k.start_ns = k.start_ns.saturating_add(base);
            k.end_ns = k.end_ns.saturating_add(base);
            k
        })
        .collect();
    kernels.sort_by_key(|k| (k.start_ns, k.end_ns));
    Ok(kernels)
}

#[derive(Default)]
struct Found {
    rows: Vec<CollectiveKernel>,
    base_time_ns: Option<i64>,
}

/// The top level: an object with `traceEvents` (and `baseTimeNanoseconds`), or a bare array.
struct Document<'a>(&'a mut Found);

impl<'de> DeserializeSeed<'de> for Document<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Document<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace (an object with traceEvents, or an array of events)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traceEvents" => map.next_value_seed(Events(&mut self.0.rows))?,
                "baseTimeNanoseconds" => {
                    self.0.base_time_ns = map.next_value::<Value>()?.as_i64();
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Events(&mut self.0.rows).visit_seq(seq)
    }
}

/// `traceEvents`, one event at a time, keeping the collective kernels.
struct Events<'a>(&'a mut Vec<CollectiveKernel>);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(row) = seq.next_element::<Row<'de>>()? {
            if let Some(kernel) = row.into_collective() {
                self.0.push(kernel);
            }
        }
        Ok(())
    }
}

/// The fields of an event this reader looks at; the rest is skipped unread.
#[derive(Deserialize)]
struct Row<'a> {
    #[serde(default, borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    ts: Option<&'a RawValue>,
    #[serde(default, borrow)]
    dur: Option<&'a RawValue>,
    #[serde(default)]
    args: Option<RowArgs>,
}

#[derive(Deserialize)]
struct RowArgs {
    #[serde(default, rename = "Collective name")]
    collective: Option<Value>,
    #[serde(default, rename = "Process Group Name")]
    process_group: Option<Value>,
    #[serde(default, rename = "Process Group Ranks")]
    group_ranks: Option<Value>,
    #[serde(default, rename = "Seq")]
    seq: Option<Value>,
}

impl Row<'_> {
    fn into_collective(self) -> Option<CollectiveKernel> {
        if self.ph.as_deref() != Some("X") || self.cat.as_deref() != Some("kernel") {
            return None;
        }
        let name = self.name?.into_owned();
        let args = self.args;
        let recorded = args
            .as_ref()
            .is_some_and(|a| a.collective.is_some() || a.process_group.is_some());
        if !recorded && !is_collective_kernel(&name) {
            return None;
        }
        let start_ns = micros_to_ns(self.ts?)?;
        let dur_ns = micros_to_ns(self.dur?)?;
        let (collective, process_group, group_ranks, seq) = match &args {
            Some(a) => (
                value_text(a.collective.as_ref()),
                value_text(a.process_group.as_ref()),
                a.group_ranks.as_ref().and_then(parse_ranks),
                a.seq.as_ref().and_then(value_int),
            ),
            None => (None, None, None, None),
        };
        Some(CollectiveKernel {
            name,
            collective,
            process_group,
            group_ranks,
            seq,
            start_ns,
            end_ns: start_ns.saturating_add(dur_ns),
        })
    }
}

/// A text argument; some versions write numbers (`"Process Group Name": 0`).
fn value_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn value_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Microseconds as written (a number, or a number in a string) to nanoseconds, exactly.
fn micros_to_ns(value: &RawValue) -> Option<i64> {
    micros_text_to_nanos(value.get().trim().trim_matches('"'))
}

/// `"[0, 1]"` (as recorded) or `[0, 1]`.
fn parse_ranks(value: &Value) -> Option<Vec<u32>> {
    match value {
        Value::String(s) => s
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| p.trim().parse().ok())
            .collect(),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_u64().and_then(|r| u32::try_from(r).ok()))
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_ranks_read_as_recorded_or_as_a_list() {
        assert_eq!(
            parse_ranks(&Value::String("[0, 1]".into())),
            Some(vec![0, 1])
        );
        assert_eq!(parse_ranks(&serde_json::json!([3, 4])), Some(vec![3, 4]));
        assert_eq!(parse_ranks(&Value::String("[]".into())), Some(vec![]));
        assert_eq!(parse_ranks(&Value::String("[a]".into())), None);
    }
}
