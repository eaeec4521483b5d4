//! Reading an Execution Trace file: plain or gzipped JSON, the header, then every node in
//! the layout its schema version names.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::error::EtError;
use super::layout::{read_node, version_of};
use super::node::ExecutionTrace;

/// The document's top level; nodes are read one by one once the schema is known.
#[derive(Deserialize)]
struct Document {
    schema: Option<String>,
    pid: Option<i64>,
    time: Option<String>,
    nodes: Option<Vec<Value>>,
}

/// Reads the Execution Trace at `path`.
pub fn load(path: &Path) -> Result<ExecutionTrace, EtError> {
    let bytes = std::fs::read(path).map_err(|source| EtError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    load_bytes(path, &bytes)
}

/// Reads an Execution Trace from `bytes` (the contents of `path`, which names it in errors).
pub fn load_bytes(path: &Path, bytes: &[u8]) -> Result<ExecutionTrace, EtError> {
    let inflated;
    let text: &[u8] = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .map_err(|e| EtError::Gzip {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        inflated = out;
        &inflated
    } else {
        bytes
    };
    let json_error = |e: serde_json::Error| EtError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    let document: Document = serde_json::from_slice(text).map_err(json_error)?;
    let not_et = |what: &str| EtError::NotAnExecutionTrace {
        path: path.to_path_buf(),
        what: what.to_owned(),
    };
    let schema = document.schema.ok_or_else(|| not_et("no `schema`"))?;
    let nodes = document.nodes.ok_or_else(|| not_et("no `nodes`"))?;
    let version = version_of(&schema).ok_or_else(|| EtError::UnknownSchema {
        path: path.to_path_buf(),
        schema: schema.clone(),
    })?;
    let nodes = nodes
        .iter()
        .map(|node| {
            read_node(node, version).map_err(|e| EtError::BadNode {
                path: path.to_path_buf(),
                id: e.id,
                name: e.name,
                message: e.message,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ExecutionTrace {
        path: path.to_path_buf(),
        schema,
        version,
        pid: document.pid,
        time: document.time,
        nodes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(text: &str) -> String {
        load_bytes(Path::new("et.json"), text.as_bytes())
            .err()
            .unwrap()
            .to_string()
    }

    #[test]
    fn malformed_documents_name_the_file_and_what_is_wrong() {
        assert!(error_of("{\"schema\": \"1.0.1\", \"nodes\": [")
            .starts_with("et.json: not an Execution Trace: invalid JSON at line 1"));
        assert_eq!(
            error_of("{\"traceEvents\": []}"),
            "et.json: not an Execution Trace: no `schema`; torch.profiler.ExecutionTraceObserver \
             writes an object with a `schema` and a `nodes` list"
        );
        assert!(error_of("{\"schema\": \"3.0\", \"nodes\": []}")
            .starts_with("et.json: Execution Trace schema 3.0 is not one replay reads"));
        assert_eq!(
            error_of("{\"schema\": \"1.0.1\", \"nodes\": [{\"id\": 4, \"name\": \"aten::t\", \"inputs\": 3}]}"),
            "et.json: node 4 (aten::t): `inputs` is a list, not 3"
        );
    }

    #[test]
    fn a_truncated_gzip_is_named() {
        let text = b"{\"schema\": \"1.0.1\", \"nodes\": []}";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, text).unwrap();
        let gz = gz.finish().unwrap();
        let error = load_bytes(Path::new("et.json.gz"), &gz[..gz.len() - 6])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with("et.json.gz: gzip stream is corrupt or truncated"),
            "{error}"
        );
        assert!(load_bytes(Path::new("et.json.gz"), &gz)
            .unwrap()
            .nodes
            .is_empty());
    }
}
