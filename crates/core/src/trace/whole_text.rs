//! A whole JSON text in memory parsed into kept events: in chunks on every core where the
//! text can be cut ([`super::chunked`]), else in one pass that names any error by line and
//! column.

use std::path::Path;

use super::assemble::TraceAssembler;
use super::chunked;
use super::document::{finish_metadata, parse_document, ParsePosition};
use super::error::TraceError;
use super::json_position::{offset_of_line_column, strip_position};

/// What the first meaningful byte says the top-level value is, for a precise message
/// when it is not an object (serde's would only say "invalid type").
fn check_top_level(json: &[u8], path: &Path) -> Result<(), TraceError> {
    const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";
    let body = json.strip_prefix(UTF8_BOM).unwrap_or(json);
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    let found = match first {
        Some(b'{') => return Ok(()),
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        // A scalar is named only when the whole file is that scalar: a text file starting
        // with "these notes" or "2024" is not a boolean or a number, it is not JSON, and the
        // parser says where.
        Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
            match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(serde_json::Value::Number(_)) => "a number",
                Ok(serde_json::Value::Bool(_)) => "a boolean",
                Ok(serde_json::Value::Null) => "null",
                _ => return Ok(()),
            }
        }
        // Not the start of any JSON value: let the parser report where and why.
        Some(_) => return Ok(()),
        None => "missing (the file is only whitespace)",
    };
    Err(TraceError::WrongTopLevelType {
        path: path.to_path_buf(),
        found,
    })
}

pub(super) fn parse_json<'p>(
    json: &[u8],
    path: &'p Path,
) -> Result<TraceAssembler<'p>, TraceError> {
    check_top_level(json, path)?;
    let body = json.strip_prefix(b"\xef\xbb\xbf").unwrap_or(json);
    // Validating UTF-8 once for the whole text is cheaper than per string, which is what
    // parsing from bytes does. A file with invalid UTF-8 somewhere (in a string we would
    // skip anyway, say) is still read, from bytes, as serde_json alone would read it.
    let text = std::str::from_utf8(body).ok();
    // Cut into chunks parsed on every core where the file allows; anything unexpected
    // (no cut found, a chunk that does not parse) falls back to the single pass below, which
    // then names the problem exactly as it always has.
    if let Some(parsed) = text.and_then(|text| chunked::parse(text, path)) {
        return Ok(parsed);
    }
    parse_in_one_pass(body, text, path)
}

/// The whole document in one pass on this thread: `text` is `body` when it is valid UTF-8.
pub(super) fn parse_in_one_pass<'p>(
    body: &[u8],
    text: Option<&str>,
    path: &'p Path,
) -> Result<TraceAssembler<'p>, TraceError> {
    let mut assembler = TraceAssembler::new(path, body.len());
    let mut position = ParsePosition::default();
    let mut harness_pytorch_version = None;
    let outcome = match text {
        Some(text) => parse_document(
            serde_json::Deserializer::from_str(text),
            &mut assembler,
            &mut position,
            &mut harness_pytorch_version,
        ),
        None => parse_document(
            serde_json::Deserializer::from_slice(body),
            &mut assembler,
            &mut position,
            &mut harness_pytorch_version,
        ),
    };
    if let Some(failure) = assembler.failure.take() {
        return Err(failure);
    }
    outcome.map_err(|error| json_error(&error, &position, path, body, 0))?;
    if !assembler.saw_trace_events {
        return Err(TraceError::MissingTraceEvents {
            path: path.to_path_buf(),
        });
    }
    finish_metadata(&mut assembler, harness_pytorch_version);
    Ok(assembler)
}

/// serde_json's `error` as the trace's: its line and column, and its byte offset in `text`
/// (the text parsed) plus `base` (where that text starts in the JSON).
pub(super) fn json_error(
    error: &serde_json::Error,
    position: &ParsePosition,
    path: &Path,
    text: &[u8],
    base: u64,
) -> TraceError {
    let (line, column) = (error.line(), error.column());
    let offset = match error.classify() {
        // The end of the text, wherever serde_json's column points.
        serde_json::error::Category::Eof => base + text.len() as u64,
        _ => base + offset_of_line_column(text, line, column) as u64,
    };
    match error.classify() {
        serde_json::error::Category::Eof => TraceError::TruncatedJson {
            path: path.to_path_buf(),
            line,
            column,
            offset,
        },
        serde_json::error::Category::Syntax | serde_json::error::Category::Io => {
            TraceError::InvalidJson {
                path: path.to_path_buf(),
                line,
                column,
                offset,
                message: strip_position(&error.to_string()),
            }
        }
        serde_json::error::Category::Data => {
            let message = strip_position(&error.to_string());
            let message = if position.in_trace_events {
                format!("in traceEvents[{}]: {message}", position.event_index)
            } else {
                message
            };
            TraceError::UnexpectedValue {
                path: path.to_path_buf(),
                line,
                column,
                offset,
                message,
            }
        }
    }
}
