//! A block of `traceEvents` read event by event on one thread: the streaming reader's
//! fallback where the chunks on every core step aside (a refused cut, text that is not
//! UTF-8, an event that does not parse), which finds the block's true last boundary or names
//! what is wrong and where.

use super::assemble::TraceAssembler;
use super::chunked::{is_json_whitespace_byte, OneEvent};
use super::error::TraceError;
use super::json_position::{offset_of_line_column, strip_position};

/// Where a block's events ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockEnd {
    /// At an event boundary (the offset of the next event's first byte, or the block's end
    /// after a `,`): what follows is carried into the next block.
    Carry(usize),
    /// At the array's `]`: the offset just after it.
    ArrayEnd(usize),
}

/// Why a block could not be read.
#[derive(Debug)]
pub(super) enum SequentialFailure {
    /// The assembler refused an event (a field missing or invalid): its own message.
    Rejected(TraceError),
    /// Not JSON, or not an event, at byte `at` of the block.
    Invalid { at: usize, message: String },
    /// The input ends at byte `at` of the block, inside the array.
    Truncated { at: usize },
}

/// The events of `bytes` (which starts at an event boundary) pushed onto `assembler` one by
/// one. An event is taken only once what follows it is seen (`,` or `]`), so a block that
/// is not the `last` ends at a boundary the next block starts from.
pub(super) fn parse_sequential(
    assembler: &mut TraceAssembler<'_>,
    bytes: &[u8],
    last: bool,
) -> Result<BlockEnd, SequentialFailure> {
    let mut at = skip_whitespace(bytes, 0);
    loop {
        let event_start = at;
        let Some(rest) = bytes.get(at..).filter(|rest| !rest.is_empty()) else {
            return if last {
                Err(SequentialFailure::Truncated { at: bytes.len() })
            } else {
                Ok(BlockEnd::Carry(event_start))
            };
        };
        let mut events = serde_json::Deserializer::from_slice(rest).into_iter::<OneEvent>();
        let event = match events.next() {
            Some(Ok(OneEvent(event))) => event,
            Some(Err(error)) if error.classify() == serde_json::error::Category::Eof => {
                return if last {
                    Err(SequentialFailure::Truncated { at: bytes.len() })
                } else {
                    Ok(BlockEnd::Carry(event_start))
                };
            }
            Some(Err(error)) => {
                let within = offset_of_line_column(rest, error.line(), error.column());
                return Err(SequentialFailure::Invalid {
                    at: event_start + within,
                    message: strip_position(&error.to_string()),
                });
            }
            None => {
                return if last {
                    Err(SequentialFailure::Truncated { at: bytes.len() })
                } else {
                    Ok(BlockEnd::Carry(event_start))
                };
            }
        };
        let after = skip_whitespace(bytes, event_start + events.byte_offset());
        let separator = bytes.get(after).copied();
        let ends_array = match separator {
            None if last => return Err(SequentialFailure::Truncated { at: bytes.len() }),
            None => return Ok(BlockEnd::Carry(event_start)),
            Some(b',') => false,
            Some(b']') => true,
            Some(_) => {
                return Err(SequentialFailure::Invalid {
                    at: after,
                    message: "expected `,` or `]` after an entry of `traceEvents`".into(),
                })
            }
        };
        let index = usize::try_from(assembler.counts.total).unwrap_or(usize::MAX);
        assembler
            .push(index, &event)
            .map_err(SequentialFailure::Rejected)?;
        if ends_array {
            return Ok(BlockEnd::ArrayEnd(after + 1));
        }
        at = skip_whitespace(bytes, after + 1);
    }
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).copied().is_some_and(is_json_whitespace_byte) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn assembler() -> TraceAssembler<'static> {
        TraceAssembler::new(Path::new("t.json"), 0)
    }

    const EVENT: &str = r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"correlation": 5}}"#;

    #[test]
    fn an_event_is_taken_once_its_separator_is_seen() {
        let text = format!("{EVENT},\n  {EVENT}");
        let mut a = assembler();
        let end = parse_sequential(&mut a, text.as_bytes(), false).unwrap();
        // The second event has no separator yet: it is carried, not taken.
        assert_eq!(end, BlockEnd::Carry(EVENT.len() + 4));
        assert_eq!(a.counts.total, 1);
        let mut a = assembler();
        let text = format!("{EVENT},\n  {EVENT}\n]}}");
        assert_eq!(
            parse_sequential(&mut a, text.as_bytes(), true).unwrap(),
            BlockEnd::ArrayEnd(text.len() - 1)
        );
        assert_eq!(a.counts.kept, 2);
    }

    #[test]
    fn a_cut_event_is_carried_or_truncated() {
        let text = format!("{EVENT},{}", &EVENT[..40]);
        let mut a = assembler();
        assert_eq!(
            parse_sequential(&mut a, text.as_bytes(), false).unwrap(),
            BlockEnd::Carry(EVENT.len() + 1)
        );
        let mut a = assembler();
        assert!(matches!(
            parse_sequential(&mut a, text.as_bytes(), true),
            Err(SequentialFailure::Truncated { at }) if at == text.len()
        ));
    }

    #[test]
    fn garbage_is_named_with_its_offset() {
        let text = format!("{EVENT}, {{\"ph\": \"X\" \"cat\": 1}}, {EVENT}");
        let mut a = assembler();
        match parse_sequential(&mut a, text.as_bytes(), false) {
            Err(SequentialFailure::Invalid { at, message }) => {
                assert_eq!(at, EVENT.len() + 2 + 11, "{message}");
                assert!(message.contains("expected `,` or `}`"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}
