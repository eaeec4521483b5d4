//! The JSON text of a trace read from any [`Read`] in blocks, on a thread of its own.
//!
//! The thread reads the bytes as stored, hashes them (SHA-256, the trace's identity) and
//! counts them as they go by, inflates them when they start with the gzip magic (one member
//! or many, as `pigz` and `cat a.gz b.gz` write them), and hands the JSON on in blocks of a
//! fixed size through a channel one block deep: a few blocks exist at a time (one being
//! filled, one waiting, the one being parsed, the one before it on its way back; a new one
//! is made only when none has come back yet), and emptied blocks come back to be refilled,
//! so no fresh memory is touched once the first few are made.

use std::io::{Chain, Cursor, Read};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};

/// What the reading thread found once the input ended.
#[derive(Debug, Clone)]
pub(super) struct InputSummary {
    /// SHA-256 of the bytes as stored, lowercase hex.
    pub sha256: String,
    pub gzipped: bool,
    /// Bytes as stored.
    pub stored_bytes: u64,
}

/// Why the input stopped before its end.
#[derive(Debug)]
pub(super) struct InputFailure {
    pub kind: InputFailureKind,
    /// Bytes of JSON handed on before the failure.
    pub json_offset: u64,
    /// Bytes as stored read by then (for gzip, the compressed stream's offset, to within the
    /// inflater's read-ahead of 32 KiB).
    pub stored_offset: u64,
}

#[derive(Debug)]
pub(super) enum InputFailureKind {
    Io(std::io::Error),
    TruncatedGzip,
    CorruptGzip(String),
}

/// Free bytes in front of every block's JSON (a block is `BLOCK_HEADROOM` bytes, then the
/// JSON): the parse puts the bytes carried over from the block before there, so that a block
/// is parsed where it was read instead of being copied after them.
pub(super) const BLOCK_HEADROOM: usize = 256 << 10;

enum Message {
    /// A block (its JSON after [`BLOCK_HEADROOM`] bytes), the bytes as stored read by the
    /// time it was full, and whether they are gzip.
    Block(Vec<u8>, u64, bool),
    End(InputSummary),
    Failed(InputFailure),
}

/// The receiving end: blocks of JSON in order, then the summary or the failure.
pub(super) struct BlockInput {
    blocks: Receiver<Message>,
    recycle: Sender<Vec<u8>>,
}

/// What [`BlockInput::next`] gives.
pub(super) enum Next {
    /// A block (its JSON after [`BLOCK_HEADROOM`] bytes), the bytes as stored read by the
    /// time it was full, and whether they are gzip.
    Block(Vec<u8>, u64, bool),
    End(InputSummary),
    Failed(InputFailure),
}

impl BlockInput {
    /// Starts the reading thread on `reader`, handing on blocks of `block_bytes` of JSON.
    pub(super) fn start<R: Read + Send + 'static>(reader: R, block_bytes: usize) -> BlockInput {
        let (send, blocks) = mpsc::sync_channel(1);
        let (recycle, recycled) = mpsc::channel();
        // The thread is not joined: when the parse stops early (bad input), dropping the
        // receiver makes its next send fail and it ends by itself, even while it waits on
        // a pipe whose writer is slow.
        let _detached = std::thread::Builder::new()
            .name("trace-reader".into())
            .spawn(move || read_blocks(reader, block_bytes.max(1), &send, &recycled));
        BlockInput { blocks, recycle }
    }

    /// The next block, or how the input ended.
    pub(super) fn next(&mut self) -> Next {
        match self.blocks.recv() {
            Ok(Message::Block(block, stored, gzipped)) => Next::Block(block, stored, gzipped),
            Ok(Message::End(summary)) => Next::End(summary),
            Ok(Message::Failed(failure)) => Next::Failed(failure),
            // The thread could not start, or ended without a word (it cannot panic on
            // input; this is for completeness).
            Err(_) => Next::Failed(InputFailure {
                kind: InputFailureKind::Io(std::io::Error::other("the reading thread stopped")),
                json_offset: 0,
                stored_offset: 0,
            }),
        }
    }

    /// Gives an emptied block (or any buffer) back to be refilled.
    pub(super) fn give_back(&self, block: Vec<u8>) {
        // The thread may have finished: the block is then simply freed.
        let _ = self.recycle.send(block);
    }
}

/// The stored bytes, hashed and counted as they are read.
struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    count: u64,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        if let Some(bytes) = buf.get(..read) {
            self.hasher.update(bytes);
        }
        self.count += read as u64;
        Ok(read)
    }
}

type Stored<R> = Chain<Cursor<Vec<u8>>, HashingReader<R>>;

/// The JSON: the stored bytes as they are, or inflated.
enum Json<R: Read> {
    Plain(Stored<R>),
    Gzip(Box<MultiGzDecoder<Stored<R>>>),
}

impl<R: Read> Json<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Json::Plain(stored) => stored.read(buf),
            Json::Gzip(inflater) => inflater.read(buf),
        }
    }

    fn hashing(&self) -> &HashingReader<R> {
        match self {
            Json::Plain(stored) => stored.get_ref().1,
            Json::Gzip(inflater) => inflater.get_ref().get_ref().1,
        }
    }
}

/// The reading thread's work; ends when the input ends, fails, or the receiver is gone.
fn read_blocks<R: Read>(
    reader: R,
    block_bytes: usize,
    send: &SyncSender<Message>,
    recycled: &Receiver<Vec<u8>>,
) {
    let mut hashing = HashingReader {
        inner: reader,
        hasher: Sha256::new(),
        count: 0,
    };
    // The first two bytes say whether it is gzip; they are read through the hasher and
    // put back in front.
    let mut head = Vec::with_capacity(2);
    while head.len() < 2 {
        let mut byte = [0u8; 2];
        let want = 2 - head.len();
        match hashing.read(&mut byte[..want]) {
            Ok(0) => break,
            Ok(read) => head.extend_from_slice(&byte[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => {
                let _ = send.send(Message::Failed(InputFailure {
                    kind: InputFailureKind::Io(error),
                    json_offset: 0,
                    stored_offset: hashing.count,
                }));
                return;
            }
        }
    }
    let gzipped = head == [0x1f, 0x8b];
    let stored = Cursor::new(head).chain(hashing);
    let mut json = if gzipped {
        Json::Gzip(Box::new(MultiGzDecoder::new(stored)))
    } else {
        Json::Plain(stored)
    };
    let mut json_offset = 0u64;
    loop {
        let mut block = recycled.try_recv().unwrap_or_default();
        block.resize(BLOCK_HEADROOM + block_bytes, 0);
        let mut filled = BLOCK_HEADROOM;
        let mut ended = false;
        while filled < block.len() {
            match json.read(&mut block[filled..]) {
                Ok(0) => {
                    ended = true;
                    break;
                }
                Ok(read) => filled += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    let kind = match (gzipped, error.kind()) {
                        (true, std::io::ErrorKind::UnexpectedEof) => {
                            InputFailureKind::TruncatedGzip
                        }
                        (true, std::io::ErrorKind::InvalidInput)
                        | (true, std::io::ErrorKind::InvalidData) => {
                            InputFailureKind::CorruptGzip(error.to_string())
                        }
                        _ => InputFailureKind::Io(error),
                    };
                    let _ = send.send(Message::Failed(InputFailure {
                        kind,
                        json_offset: json_offset + (filled - BLOCK_HEADROOM) as u64,
                        stored_offset: json.hashing().count,
                    }));
                    return;
                }
            }
        }
        block.truncate(filled);
        json_offset += (filled - BLOCK_HEADROOM) as u64;
        let stored = json.hashing().count;
        if filled > BLOCK_HEADROOM && send.send(Message::Block(block, stored, gzipped)).is_err() {
            return;
        }
        if ended {
            let hashing = json.hashing();
            let summary = InputSummary {
                sha256: hex(&hashing.hasher.clone().finalize()),
                gzipped,
                stored_bytes: hashing.count,
            };
            let _ = send.send(Message::End(summary));
            return;
        }
    }
}

/// Lowercase hex of a digest.
pub(super) fn hex(digest: &[u8]) -> String {
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}
