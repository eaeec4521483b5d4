//! Frames of result files: rows that the core read and checked with its own types, turned
//! back into JSON values and laid out as columns. Nested objects become dotted columns
//! (`stats.median_us`, as `pandas.json_normalize` names them); a column whose values are all
//! integers is int64, all numbers float64, all booleans bool, anything else text (arrays and
//! mixed values as their JSON text). A value missing from a row is null.

use serde_json::{Map, Value};

use crate::columns::{Builder, Table};

/// The kind of a column, from all of its values.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Unknown,
    Int,
    Float,
    Bool,
    Text,
}

impl Kind {
    fn with(self, value: &Value) -> Kind {
        let this = match value {
            Value::Null => return self,
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_i64() => Kind::Int,
            Value::Number(_) => Kind::Float,
            _ => Kind::Text,
        };
        match (self, this) {
            (Kind::Unknown, k) => k,
            (a, b) if a == b => a,
            (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
            _ => Kind::Text,
        }
    }
}

/// `object`'s fields flattened into `out` under `prefix` (`a.b.c`).
fn flatten(prefix: &str, object: &Map<String, Value>, out: &mut Vec<(String, Value)>) {
    for (key, value) in object {
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) if !inner.is_empty() => flatten(&name, inner, out),
            other => out.push((name, other.clone())),
        }
    }
}

/// A frame of `rows`, columns in the order they first appear. A row that is not an object
/// is one column, `value`.
pub fn table(rows: &[Value]) -> Table {
    let flat: Vec<Vec<(String, Value)>> = rows
        .iter()
        .map(|row| {
            let mut out = Vec::new();
            match row {
                Value::Object(object) => flatten("", object, &mut out),
                other => out.push(("value".to_owned(), other.clone())),
            }
            out
        })
        .collect();
    let mut names: Vec<String> = Vec::new();
    let mut kinds: Vec<Kind> = Vec::new();
    for row in &flat {
        for (name, value) in row {
            let at = match names.iter().position(|n| n == name) {
                Some(at) => at,
                None => {
                    names.push(name.clone());
                    kinds.push(Kind::Unknown);
                    names.len() - 1
                }
            };
            kinds[at] = kinds[at].with(value);
        }
    }
    let mut builders: Vec<Builder> = names
        .iter()
        .zip(&kinds)
        .map(|(name, kind)| match kind {
            Kind::Int => Builder::ints(name),
            Kind::Float => Builder::floats(name),
            Kind::Bool => Builder::bools(name),
            Kind::Unknown | Kind::Text => Builder::strs(name),
        })
        .collect();
    for row in &flat {
        for (at, builder) in builders.iter_mut().enumerate() {
            let value = row
                .iter()
                .find(|(name, _)| *name == names[at])
                .map(|(_, v)| v);
            match (kinds[at], value) {
                (_, None | Some(Value::Null)) => builder.str(None),
                (Kind::Int, Some(v)) => builder.int(v.as_i64()),
                (Kind::Float, Some(v)) => builder.float(v.as_f64()),
                (Kind::Bool, Some(v)) => builder.bool(v.as_bool()),
                (_, Some(Value::String(s))) => builder.str(Some(s)),
                (_, Some(v)) => builder.str(Some(&v.to_string())),
            }
        }
    }
    Table::new(builders)
}

/// A result file's value split into frames: each field holding a list of objects is a frame
/// of its own (`results`, `top_signatures`), each field holding an object of objects a frame
/// with the key as column `key` (`fusion_profiles`), and every other field a column of the
/// one-row frame `summary`.
pub fn sections(value: &Value) -> Vec<(String, Table)> {
    let Value::Object(object) = value else {
        return vec![("summary".to_owned(), table(std::slice::from_ref(value)))];
    };
    let mut rest = Map::new();
    let mut out = Vec::new();
    for (key, field) in object {
        match field {
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                out.push((key.clone(), table(items)));
            }
            Value::Object(inner) if !inner.is_empty() && inner.values().all(Value::is_object) => {
                let rows: Vec<Value> = inner
                    .iter()
                    .map(|(k, v)| {
                        let mut row = Map::new();
                        row.insert("key".to_owned(), Value::String(k.clone()));
                        if let Value::Object(fields) = v {
                            row.extend(fields.clone());
                        }
                        Value::Object(row)
                    })
                    .collect();
                out.push((key.clone(), table(&rows)));
            }
            other => {
                rest.insert(key.clone(), other.clone());
            }
        }
    }
    out.insert(0, ("summary".to_owned(), table(&[Value::Object(rest)])));
    out
}
