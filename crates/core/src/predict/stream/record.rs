//! What the streamed predict keeps of an event while it sorts: the whole event (every field
//! the in-memory predict may read), its position in the file, the step it is routed to and,
//! for a GPU activity, the end of the work before it on its stream. Written to disk as
//! numbers and string ids (segments of [`crate::signature::fold::sorter`]) when the records outgrow memory.

use std::cmp::Ordering;
use std::io::{Read, Write};

use crate::signature::fold::sortable::Sortable;

use crate::signature::fold::records::{bad_data, inputs_in, inputs_out, In, Out};
use crate::trace::event::{EventArgs, ExternalId, ExternalIdKey, WaitOn};
use crate::trace::{Category, Event, ExecutionId, Nanos, StrId};

/// One kept event on its way to its step.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Position among the trace's kept events.
    pub index: u64,
    /// The step it is routed to (0 until routed).
    pub step: u32,
    /// GPU activities: the end of the earlier work on its stream, once swept.
    pub previous_end: Option<Nanos>,
    pub event: Event,
}

pub type Order = fn(&Record, &Record) -> Ordering;

/// Per stream, by start: the order the work before each activity is found in.
pub fn by_stream(a: &Record, b: &Record) -> Ordering {
    let key = |r: &Record| (r.event.pid, r.event.tid, r.event.ts_ns, r.index);
    key(a).cmp(&key(b))
}

/// By correlation id, in file order within one: a launch call meets its activities.
pub fn by_correlation(a: &Record, b: &Record) -> Ordering {
    (a.event.args.correlation, a.index).cmp(&(b.event.args.correlation, b.index))
}

/// By step, in file order within one: each step's events together, as a trace has them.
pub fn by_step(a: &Record, b: &Record) -> Ordering {
    (a.step, a.index).cmp(&(b.step, b.index))
}

/// In file order.
pub fn by_index(a: &Record, b: &Record) -> Ordering {
    a.index.cmp(&b.index)
}

const CATEGORIES: [Category; 13] = [
    Category::CpuOp,
    Category::UserAnnotation,
    Category::GpuUserAnnotation,
    Category::CudaRuntime,
    Category::CudaDriver,
    Category::Kernel,
    Category::GpuMemcpy,
    Category::GpuMemset,
    Category::CudaSync,
    Category::PythonFunction,
    Category::FlowCpuToGpu,
    Category::FlowForwardBackward,
    Category::Unknown,
];

fn id_out<W: Write>(out: &mut Out<'_, W>, id: ExecutionId) -> std::io::Result<()> {
    match id {
        ExecutionId::Number(n) => {
            out.u8(0)?;
            out.i64(n)
        }
        ExecutionId::Label(label) => {
            out.u8(1)?;
            out.u32(label.index() as u32)
        }
    }
}

fn id_in<R: Read>(input: &mut In<'_, R>) -> std::io::Result<ExecutionId> {
    Ok(match input.u8()? {
        0 => ExecutionId::Number(input.i64()?),
        1 => ExecutionId::Label(input.str()?),
        _ => return Err(bad_data("pid or tid")),
    })
}

impl Sortable for Record {
    fn encode<W: Write>(&self, writer: &mut W) -> std::io::Result<()> {
        let mut out = Out(writer);
        out.u64(self.index)?;
        out.u32(self.step)?;
        out.opt_i64(self.previous_end)?;
        let event = &self.event;
        let category = CATEGORIES
            .iter()
            .position(|&c| c == event.category)
            .ok_or_else(|| bad_data("category"))?;
        out.u8(category as u8)?;
        out.u32(event.name.index() as u32)?;
        id_out(&mut out, event.pid)?;
        id_out(&mut out, event.tid)?;
        out.i64(event.ts_ns)?;
        out.i64(event.dur_ns)?;
        let args = &event.args;
        match args.external_id {
            Some(ExternalId { value, key }) => {
                out.u8(match key {
                    ExternalIdKey::Capitalised => 1,
                    ExternalIdKey::Lowercase => 2,
                })?;
                out.i64(value)?;
            }
            None => out.u8(0)?,
        }
        out.opt_i64(args.correlation)?;
        out.opt_i64(args.stream)?;
        out.opt_i64(args.device)?;
        out.opt_u64(args.bytes)?;
        out.opt_dim3(args.grid)?;
        out.opt_dim3(args.block)?;
        out.opt_i64(args.callback_id)?;
        out.opt_i64(args.sequence_number)?;
        out.opt_i64(args.forward_thread_id)?;
        out.opt_i64(args.record_function_id)?;
        match &args.wait_on {
            Some(wait) => {
                out.u8(1)?;
                out.i64(wait.stream)?;
                out.i64(wait.record_correlation)?;
            }
            None => out.u8(0)?,
        }
        inputs_out(&mut out, &args.inputs)
    }

    fn decode<R: Read>(reader: &mut R) -> std::io::Result<Self> {
        let mut input = In(reader);
        let index = input.u64()?;
        let step = input.u32()?;
        let previous_end = input.opt_i64()?;
        let category = *CATEGORIES
            .get(usize::from(input.u8()?))
            .ok_or_else(|| bad_data("category"))?;
        let name: StrId = input.str()?;
        let pid = id_in(&mut input)?;
        let tid = id_in(&mut input)?;
        let ts_ns = input.i64()?;
        let dur_ns = input.i64()?;
        let external_id = match input.u8()? {
            0 => None,
            key => Some(ExternalId {
                key: if key == 1 {
                    ExternalIdKey::Capitalised
                } else {
                    ExternalIdKey::Lowercase
                },
                value: input.i64()?,
            }),
        };
        let args = EventArgs {
            external_id,
            correlation: input.opt_i64()?,
            stream: input.opt_i64()?,
            device: input.opt_i64()?,
            bytes: input.opt_u64()?,
            grid: input.opt_dim3()?,
            block: input.opt_dim3()?,
            callback_id: input.opt_i64()?,
            sequence_number: input.opt_i64()?,
            forward_thread_id: input.opt_i64()?,
            record_function_id: input.opt_i64()?,
            wait_on: match input.u8()? {
                0 => None,
                _ => Some(Box::new(WaitOn {
                    stream: input.i64()?,
                    record_correlation: input.i64()?,
                })),
            },
            inputs: inputs_in(&mut input)?,
        };
        Ok(Record {
            index,
            step,
            previous_end,
            event: Event {
                category,
                name,
                pid,
                tid,
                ts_ns,
                dur_ns,
                args,
            },
        })
    }
}

/// A delay sample for the typical delays' medians ([`super::medians`]), or an activity's
/// launch as the gap's median needs it: (start, released, previous end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sample(pub [i64; 3]);

impl Sortable for Sample {
    fn encode<W: Write>(&self, writer: &mut W) -> std::io::Result<()> {
        let mut out = Out(writer);
        self.0.iter().try_for_each(|&v| out.i64(v))
    }

    fn decode<R: Read>(reader: &mut R) -> std::io::Result<Self> {
        let mut input = In(reader);
        Ok(Sample([input.i64()?, input.i64()?, input.i64()?]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::RecordedInputs;

    #[test]
    fn a_record_reads_back_as_written() {
        let record = Record {
            index: 1 << 40,
            step: 7,
            previous_end: Some(-3),
            event: Event {
                category: Category::CudaSync,
                name: StrId::from_index(5),
                pid: ExecutionId::Number(-1),
                tid: ExecutionId::Label(StrId::from_index(2)),
                ts_ns: 10,
                dur_ns: 20,
                args: EventArgs {
                    external_id: Some(ExternalId {
                        value: 9,
                        key: ExternalIdKey::Lowercase,
                    }),
                    correlation: Some(4),
                    grid: Some([1, 2, 3]),
                    wait_on: Some(Box::new(WaitOn {
                        stream: 7,
                        record_correlation: 3,
                    })),
                    inputs: RecordedInputs {
                        dims: Some(StrId::from_index(8)),
                        ..RecordedInputs::default()
                    },
                    ..EventArgs::default()
                },
            },
        };
        let mut bytes = Vec::new();
        record.encode(&mut bytes).unwrap();
        assert_eq!(Record::decode(&mut bytes.as_slice()).unwrap(), record);
        let sample = Sample([1, -2, i64::MAX]);
        let mut bytes = Vec::new();
        sample.encode(&mut bytes).unwrap();
        assert_eq!(Sample::decode(&mut bytes.as_slice()).unwrap(), sample);
    }
}
