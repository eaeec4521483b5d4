//! Where the JSON goes: as is, or gzipped in members of a bounded size (several members,
//! one after another, as `pigz` and concatenated `gzip` files have them; each member
//! starts at a step boundary).

use std::io::{self, Write};

use flate2::write::GzEncoder;
use flate2::Compression;

/// The gzip side: the open member's encoder and how full it is.
pub struct Members<W: Write> {
    encoder: Option<GzEncoder<W>>,
    /// JSON bytes in the open member.
    in_member: u64,
    /// A new member starts at the first write boundary past this many JSON bytes.
    member_bytes: u64,
    members: u64,
}

pub enum Sink<W: Write> {
    Plain(W),
    /// Boxed: an encoder holds its window and buffers.
    Gzip(Box<Members<W>>),
}

fn finished() -> io::Error {
    io::Error::other("gzip stream already finished")
}

impl<W: Write> Sink<W> {
    pub fn plain(out: W) -> Sink<W> {
        Sink::Plain(out)
    }

    pub fn gzip(out: W, member_bytes: u64) -> Sink<W> {
        Sink::Gzip(Box::new(Members {
            encoder: Some(GzEncoder::new(out, Compression::fast())),
            in_member: 0,
            member_bytes: member_bytes.max(1),
            members: 1,
        }))
    }

    /// Writes one piece (whole events); a new gzip member starts before it when the open one
    /// is full, so no member is empty.
    pub fn write_piece(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(out) => out.write_all(bytes),
            Sink::Gzip(gz) => {
                if gz.in_member >= gz.member_bytes {
                    let out = gz.encoder.take().ok_or_else(finished)?.finish()?;
                    gz.encoder = Some(GzEncoder::new(out, Compression::fast()));
                    gz.in_member = 0;
                    gz.members += 1;
                }
                gz.encoder.as_mut().ok_or_else(finished)?.write_all(bytes)?;
                gz.in_member += bytes.len() as u64;
                Ok(())
            }
        }
    }

    /// Ends the last member and flushes; returns how many gzip members were written (0 for
    /// plain output).
    pub fn finish(self) -> io::Result<u64> {
        match self {
            Sink::Plain(mut out) => {
                out.flush()?;
                Ok(0)
            }
            Sink::Gzip(mut gz) => {
                let mut out = gz.encoder.take().ok_or_else(finished)?.finish()?;
                out.flush()?;
                Ok(gz.members)
            }
        }
    }
}
