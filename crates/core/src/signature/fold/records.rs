//! The compact records a streamed classify keeps of a trace's events, in place of the
//! events: host ranges (ops, `nn.Module` ranges, launch calls) and GPU activities. Each is
//! a fixed set of numbers and string ids, written to disk as such when the records outgrow
//! memory (segments of [`super::sorter`]) and read back in the order a step needs.

use std::io::{Read, Write};

use super::sortable::Sortable;

use crate::trace::{Category, Dim3, RecordedInputs, StrId};

/// The largest record's size in memory (what a sorter's buffer holds per record).
pub const LARGEST_RECORD_BYTES: usize = {
    let host = std::mem::size_of::<HostRecord>();
    let activity = std::mem::size_of::<ActivityRecord>();
    let link = std::mem::size_of::<LaunchLink>();
    let most = if host > activity { host } else { activity };
    if most > link {
        most
    } else {
        link
    }
};

/// What a host range is, in the order the nesting sweep takes ranges that start together:
/// modules before ops (an op's module starts no later than it), ops before launches (a
/// launch's op likewise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HostKind {
    Module = 0,
    Op = 1,
    Launch = 2,
}

/// A `cpu_op`, a `python_function` `nn.Module` range or a launch call, on thread `thread`
/// (a number the sink gives each (pid, tid)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostRecord {
    pub thread: u32,
    pub ts: i64,
    pub kind: HostKind,
    pub dur: i64,
    /// Position among the trace's kept events.
    pub index: u64,
    pub name: StrId,
    pub inputs: RecordedInputs,
    /// Ops: the External id; launches: the correlation id.
    pub id: Option<i64>,
    /// Launches: the bytes the call records (a copy's or memset's size).
    pub bytes: Option<u64>,
}

impl HostRecord {
    pub fn end(&self) -> i64 {
        self.ts.saturating_add(self.dur)
    }

    /// The sweep's order: by thread, then start; at one start modules, ops, launches;
    /// ranges outer-first (longest first), launches by position alone; then position.
    pub fn sweep_key(&self) -> (u32, i64, HostKind, std::cmp::Reverse<i64>, u64) {
        let dur = if self.kind == HostKind::Launch {
            0
        } else {
            self.dur
        };
        (
            self.thread,
            self.ts,
            self.kind,
            std::cmp::Reverse(dur),
            self.index,
        )
    }
}

/// A GPU activity (kernel, copy, memset).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActivityRecord {
    pub index: u64,
    pub category: Category,
    pub name: StrId,
    pub correlation: Option<i64>,
    pub dur: i64,
    pub stream: Option<i64>,
    pub grid: Option<Dim3>,
    pub block: Option<Dim3>,
    pub bytes: Option<u64>,
    pub external_id: Option<i64>,
}

/// A launch call with a correlation id, linked to the innermost op around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaunchLink {
    pub correlation: i64,
    pub index: u64,
    pub launched_by_graph: bool,
    pub bytes: Option<u64>,
    /// The op's context ([`super::contexts::Contexts`]) and External id.
    pub op: Option<u32>,
    pub op_external_id: Option<i64>,
}

/// Little-endian numbers with a presence byte for each option.
pub(crate) struct Out<'w, W: Write>(pub(crate) &'w mut W);

impl<W: Write> Out<'_, W> {
    pub(crate) fn u8(&mut self, v: u8) -> std::io::Result<()> {
        self.0.write_all(&[v])
    }
    pub(crate) fn u32(&mut self, v: u32) -> std::io::Result<()> {
        self.0.write_all(&v.to_le_bytes())
    }
    pub(crate) fn i64(&mut self, v: i64) -> std::io::Result<()> {
        self.0.write_all(&v.to_le_bytes())
    }
    pub(crate) fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.0.write_all(&v.to_le_bytes())
    }
    pub(crate) fn opt_i64(&mut self, v: Option<i64>) -> std::io::Result<()> {
        match v {
            Some(v) => {
                self.u8(1)?;
                self.i64(v)
            }
            None => self.u8(0),
        }
    }
    pub(crate) fn opt_u64(&mut self, v: Option<u64>) -> std::io::Result<()> {
        self.opt_i64(v.map(|v| v as i64))
    }
    pub(crate) fn opt_str(&mut self, v: Option<StrId>) -> std::io::Result<()> {
        self.u32(v.map_or(u32::MAX, |id| id.index() as u32))
    }
    pub(crate) fn opt_dim3(&mut self, v: Option<Dim3>) -> std::io::Result<()> {
        match v {
            Some([x, y, z]) => {
                self.u8(1)?;
                self.u32(x)?;
                self.u32(y)?;
                self.u32(z)
            }
            None => self.u8(0),
        }
    }
}

pub(crate) struct In<'r, R: Read>(pub(crate) &'r mut R);

impl<R: Read> In<'_, R> {
    pub(crate) fn u8(&mut self) -> std::io::Result<u8> {
        let mut b = [0u8; 1];
        self.0.read_exact(&mut b)?;
        Ok(b[0])
    }
    pub(crate) fn u32(&mut self) -> std::io::Result<u32> {
        let mut b = [0u8; 4];
        self.0.read_exact(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    pub(crate) fn i64(&mut self) -> std::io::Result<i64> {
        let mut b = [0u8; 8];
        self.0.read_exact(&mut b)?;
        Ok(i64::from_le_bytes(b))
    }
    pub(crate) fn u64(&mut self) -> std::io::Result<u64> {
        Ok(self.i64()? as u64)
    }
    pub(crate) fn opt_i64(&mut self) -> std::io::Result<Option<i64>> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(self.i64()?),
        })
    }
    pub(crate) fn opt_u64(&mut self) -> std::io::Result<Option<u64>> {
        Ok(self.opt_i64()?.map(|v| v as u64))
    }
    pub(crate) fn str(&mut self) -> std::io::Result<StrId> {
        Ok(StrId::from_index(self.u32()? as usize))
    }
    pub(crate) fn opt_str(&mut self) -> std::io::Result<Option<StrId>> {
        let v = self.u32()?;
        Ok((v != u32::MAX).then(|| StrId::from_index(v as usize)))
    }
    pub(crate) fn opt_dim3(&mut self) -> std::io::Result<Option<Dim3>> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some([self.u32()?, self.u32()?, self.u32()?]),
        })
    }
}

pub(crate) fn inputs_out<W: Write>(
    out: &mut Out<'_, W>,
    inputs: &RecordedInputs,
) -> std::io::Result<()> {
    out.opt_str(inputs.dims)?;
    out.opt_str(inputs.types)?;
    out.opt_str(inputs.strides)?;
    out.opt_str(inputs.concrete)
}

pub(crate) fn inputs_in<R: Read>(input: &mut In<'_, R>) -> std::io::Result<RecordedInputs> {
    Ok(RecordedInputs {
        dims: input.opt_str()?,
        types: input.opt_str()?,
        strides: input.opt_str()?,
        concrete: input.opt_str()?,
    })
}

pub(crate) fn bad_data(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

impl Sortable for HostRecord {
    fn encode<W: Write>(&self, writer: &mut W) -> std::io::Result<()> {
        let mut out = Out(writer);
        out.u32(self.thread)?;
        out.i64(self.ts)?;
        out.u8(self.kind as u8)?;
        out.i64(self.dur)?;
        out.u64(self.index)?;
        out.u32(self.name.index() as u32)?;
        inputs_out(&mut out, &self.inputs)?;
        out.opt_i64(self.id)?;
        out.opt_u64(self.bytes)
    }

    fn decode<R: Read>(reader: &mut R) -> std::io::Result<Self> {
        let mut input = In(reader);
        Ok(HostRecord {
            thread: input.u32()?,
            ts: input.i64()?,
            kind: match input.u8()? {
                0 => HostKind::Module,
                1 => HostKind::Op,
                2 => HostKind::Launch,
                _ => return Err(bad_data("host range kind")),
            },
            dur: input.i64()?,
            index: input.u64()?,
            name: input.str()?,
            inputs: inputs_in(&mut input)?,
            id: input.opt_i64()?,
            bytes: input.opt_u64()?,
        })
    }
}

const GPU_CATEGORIES: [Category; 3] = [Category::Kernel, Category::GpuMemcpy, Category::GpuMemset];

impl Sortable for ActivityRecord {
    fn encode<W: Write>(&self, writer: &mut W) -> std::io::Result<()> {
        let mut out = Out(writer);
        out.u64(self.index)?;
        let category = GPU_CATEGORIES
            .iter()
            .position(|&c| c == self.category)
            .ok_or_else(|| bad_data("not a GPU activity"))?;
        out.u8(category as u8)?;
        out.u32(self.name.index() as u32)?;
        out.opt_i64(self.correlation)?;
        out.i64(self.dur)?;
        out.opt_i64(self.stream)?;
        out.opt_dim3(self.grid)?;
        out.opt_dim3(self.block)?;
        out.opt_u64(self.bytes)?;
        out.opt_i64(self.external_id)
    }

    fn decode<R: Read>(reader: &mut R) -> std::io::Result<Self> {
        let mut input = In(reader);
        Ok(ActivityRecord {
            index: input.u64()?,
            category: *GPU_CATEGORIES
                .get(usize::from(input.u8()?))
                .ok_or_else(|| bad_data("GPU activity category"))?,
            name: input.str()?,
            correlation: input.opt_i64()?,
            dur: input.i64()?,
            stream: input.opt_i64()?,
            grid: input.opt_dim3()?,
            block: input.opt_dim3()?,
            bytes: input.opt_u64()?,
            external_id: input.opt_i64()?,
        })
    }
}

impl Sortable for LaunchLink {
    fn encode<W: Write>(&self, writer: &mut W) -> std::io::Result<()> {
        let mut out = Out(writer);
        out.i64(self.correlation)?;
        out.u64(self.index)?;
        out.u8(u8::from(self.launched_by_graph))?;
        out.opt_u64(self.bytes)?;
        out.u32(self.op.unwrap_or(u32::MAX))?;
        out.opt_i64(self.op_external_id)
    }

    fn decode<R: Read>(reader: &mut R) -> std::io::Result<Self> {
        let mut input = In(reader);
        Ok(LaunchLink {
            correlation: input.i64()?,
            index: input.u64()?,
            launched_by_graph: input.u8()? != 0,
            bytes: input.opt_u64()?,
            op: Some(input.u32()?).filter(|&v| v != u32::MAX),
            op_external_id: input.opt_i64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Sortable + PartialEq + std::fmt::Debug>(value: T) {
        let mut bytes = Vec::new();
        value.encode(&mut bytes).unwrap();
        let back = T::decode(&mut bytes.as_slice()).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn records_read_back_as_written() {
        let id = |i| Some(StrId::from_index(i));
        round_trip(HostRecord {
            thread: 7,
            ts: -5,
            kind: HostKind::Launch,
            dur: 12,
            index: 1 << 40,
            name: StrId::from_index(3),
            inputs: RecordedInputs {
                dims: id(1),
                types: None,
                strides: id(9),
                concrete: None,
            },
            id: Some(-1),
            bytes: Some(u64::MAX),
        });
        round_trip(ActivityRecord {
            index: 4,
            category: Category::GpuMemset,
            name: StrId::from_index(0),
            correlation: None,
            dur: 0,
            stream: Some(7),
            grid: Some([1, 2, 3]),
            block: None,
            bytes: Some(64),
            external_id: Some(i64::MIN),
        });
        round_trip(LaunchLink {
            correlation: 99,
            index: 3,
            launched_by_graph: true,
            bytes: None,
            op: Some(0),
            op_external_id: None,
        });
    }
}
