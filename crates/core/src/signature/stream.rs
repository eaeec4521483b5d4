//! Reading a signature file streaming, for files too large to hold whole (issue 34: ten
//! million signatures). [`scan`] reads the file once without building its signatures: the
//! header (every field but `signatures`, the schema version checked as soon as it is read),
//! how many signatures there are, and how many bytes the largest window of them spans.
//! [`stream`] then hands the signatures over window by window, so that memory holds one
//! window, never the file.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::Path;
use std::rc::Rc;

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::read::{invalid, SignatureFileError};
use super::schema::{Signature, SignatureFile, SCHEMA_VERSION};

/// What [`scan`] found.
#[derive(Debug, Clone)]
pub struct Scan {
    /// Every field of the file but its signatures (`signatures` is empty).
    pub header: SignatureFile,
    /// How many signatures the file holds.
    pub signatures: usize,
    /// The window size the spans were measured with.
    pub window: usize,
    /// The most bytes of JSON that one window of signatures spans, and the index of its
    /// first signature.
    pub largest_window: (u64, usize),
}

impl Scan {
    /// How many windows the signatures fill.
    pub fn windows(&self) -> usize {
        self.signatures.div_ceil(self.window)
    }
}

/// One window of a file's signatures, as [`stream`] hands it over.
#[derive(Debug)]
pub struct Window {
    /// Which window (0-based).
    pub index: usize,
    /// The index in the file of its first signature.
    pub first: usize,
    pub signatures: Vec<Signature>,
}

/// What the parse carries out besides serde's errors.
#[derive(Default)]
struct Shared {
    /// Bytes read so far.
    bytes: Cell<u64>,
    /// A schema version other than this build's: (found, supported).
    version: Cell<Option<(u64, u32)>>,
    /// The window handler said stop.
    stopped: Cell<bool>,
}

/// Reads `path` once, streaming: its header, its signature count, and the largest span of
/// `window` signatures. Signatures are checked for JSON syntax only.
pub fn scan(path: &Path, window: usize) -> Result<Scan, SignatureFileError> {
    let window = window.max(1);
    let shared = Rc::new(Shared::default());
    let visitor = ScanVisitor {
        shared: shared.clone(),
        window,
    };
    let (mut header, signatures, largest_window) = run_pass(path, &shared, visitor)?;
    header.insert("signatures".into(), serde_json::Value::Array(vec![]));
    let header: SignatureFile =
        serde_json::from_value(serde_json::Value::Object(header)).map_err(|e| {
            SignatureFileError::Invalid {
                path: path.to_path_buf(),
                line: 0,
                column: 0,
                message: e.to_string(),
            }
        })?;
    Ok(Scan {
        header,
        signatures,
        window,
        largest_window,
    })
}

/// Reads `path`'s signatures in windows of `window`, calling `each` with every window from
/// window `from` on (earlier ones are read past without being built); a `Break` stops the
/// reading. Returns false when `each` stopped it.
pub fn stream(
    path: &Path,
    window: usize,
    from: usize,
    each: impl FnMut(Window) -> ControlFlow<()>,
) -> Result<bool, SignatureFileError> {
    let shared = Rc::new(Shared::default());
    let visitor = StreamVisitor {
        shared: shared.clone(),
        window: window.max(1),
        from,
        each: RefCell::new(each),
    };
    match run_pass(path, &shared, visitor) {
        Ok(()) => Ok(true),
        Err(_) if shared.stopped.get() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Parses `path` with `visitor`, mapping what stopped it to the file's error.
fn run_pass<'de, V: Visitor<'de>>(
    path: &Path,
    shared: &Rc<Shared>,
    visitor: V,
) -> Result<V::Value, SignatureFileError> {
    let file = std::fs::File::open(path).map_err(|source| SignatureFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = Counting {
        inner: BufReader::with_capacity(1 << 20, file),
        shared: shared.clone(),
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = serde::Deserializer::deserialize_map(&mut de, visitor).and_then(|v| {
        de.end()?;
        Ok(v)
    });
    match parsed {
        Ok(v) => Ok(v),
        Err(e) => Err(match shared.version.get() {
            Some((found, supported)) => SignatureFileError::UnsupportedVersion {
                path: path.to_path_buf(),
                found,
                supported,
            },
            None if e.is_io() => SignatureFileError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(e.to_string()),
            },
            None => invalid(e, path),
        }),
    }
}

/// The version key: a version other than this build's ends the pass.
fn version<'de, A: MapAccess<'de>>(map: &mut A, shared: &Shared) -> Result<u64, A::Error> {
    let found: u64 = map.next_value()?;
    if found != u64::from(SCHEMA_VERSION) {
        shared.version.set(Some((found, SCHEMA_VERSION)));
        return Err(A::Error::custom("another schema version"));
    }
    Ok(found)
}

struct ScanVisitor {
    shared: Rc<Shared>,
    window: usize,
}

type ScanValue = (
    serde_json::Map<String, serde_json::Value>,
    usize,
    (u64, usize),
);

impl<'de> Visitor<'de> for ScanVisitor {
    type Value = ScanValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a signature file (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ScanValue, A::Error> {
        let mut header = serde_json::Map::new();
        let mut counted = (0usize, (0u64, 0usize));
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema_version" => {
                    let found = version(&mut map, &self.shared)?;
                    header.insert(key, found.into());
                }
                "signatures" => {
                    counted = map.next_value_seed(CountSeed {
                        shared: &self.shared,
                        window: self.window,
                    })?;
                }
                _ => {
                    let value: serde_json::Value = map.next_value()?;
                    header.insert(key, value);
                }
            }
        }
        if !header.contains_key("schema_version") {
            return Err(A::Error::missing_field("schema_version"));
        }
        Ok((header, counted.0, counted.1))
    }
}

/// Counts the signatures of the array and the bytes each window of them spans.
struct CountSeed<'a> {
    shared: &'a Shared,
    window: usize,
}

impl<'de> DeserializeSeed<'de> for CountSeed<'_> {
    type Value = (usize, (u64, usize));
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CountSeed<'_> {
    type Value = (usize, (u64, usize));

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of signatures")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let (mut count, mut largest) = (0usize, (0u64, 0usize));
        let mut window_start = self.shared.bytes.get();
        loop {
            if count % self.window == 0 {
                window_start = self.shared.bytes.get();
            }
            if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            let span = self.shared.bytes.get() - window_start;
            if span > largest.0 {
                largest = (span, count / self.window * self.window);
            }
            count += 1;
        }
        Ok((count, largest))
    }
}

struct StreamVisitor<F> {
    shared: Rc<Shared>,
    window: usize,
    from: usize,
    each: RefCell<F>,
}

impl<'de, F: FnMut(Window) -> ControlFlow<()>> Visitor<'de> for StreamVisitor<F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a signature file (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema_version" => {
                    version(&mut map, &self.shared)?;
                }
                "signatures" => map.next_value_seed(WindowSeed { visitor: &self })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Hands the array's signatures over in windows.
struct WindowSeed<'a, F> {
    visitor: &'a StreamVisitor<F>,
}

impl<'de, F: FnMut(Window) -> ControlFlow<()>> DeserializeSeed<'de> for WindowSeed<'_, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(Window) -> ControlFlow<()>> Visitor<'de> for WindowSeed<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of signatures")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        let StreamVisitor {
            shared,
            window,
            from,
            each,
        } = self.visitor;
        let (window, from) = (*window, *from);
        let mut each = each.borrow_mut();
        let mut hand_over = |first: usize, signatures: Vec<Signature>| -> Result<(), S::Error> {
            let index = first / window;
            if each(Window {
                index,
                first,
                signatures,
            })
            .is_break()
            {
                shared.stopped.set(true);
                return Err(S::Error::custom("stopped"));
            }
            Ok(())
        };
        let mut index = 0usize;
        let mut current: Vec<Signature> = Vec::new();
        loop {
            if index / window < from {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
            } else {
                match seq.next_element::<Signature>()? {
                    Some(signature) => current.push(signature),
                    None => break,
                }
            }
            index += 1;
            if index.is_multiple_of(window) && !current.is_empty() {
                hand_over(index - current.len(), std::mem::take(&mut current))?;
            }
        }
        if !current.is_empty() {
            hand_over(index - current.len(), current)?;
        }
        Ok(())
    }
}

/// A reader that counts the bytes read through it (serde_json reads a byte at a time from
/// the buffered reader below, so the count is where the parse is).
struct Counting<R> {
    inner: R,
    shared: Rc<Shared>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.shared.bytes.set(self.shared.bytes.get() + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../signatures/h100_bert_small_infer.json")
    }

    #[test]
    fn a_scan_and_a_stream_give_what_the_whole_read_gives() {
        let whole = super::super::read_file(&shipped()).unwrap();
        let scan = scan(&shipped(), 5).unwrap();
        assert_eq!(scan.signatures, whole.signatures.len());
        assert_eq!(scan.windows(), whole.signatures.len().div_ceil(5));
        assert!(scan.largest_window.0 > 0);
        let mut header = whole.clone();
        header.signatures.clear();
        assert_eq!(scan.header, header);
        let mut seen = Vec::new();
        let mut firsts = Vec::new();
        assert!(stream(&shipped(), 5, 0, |w| {
            firsts.push((w.index, w.first));
            seen.extend(w.signatures);
            ControlFlow::Continue(())
        })
        .unwrap());
        assert_eq!(seen, whole.signatures);
        assert_eq!(firsts, vec![(0, 0), (1, 5), (2, 10), (3, 15)]);
        // From window 2: the earlier ones are read past.
        let mut later = Vec::new();
        stream(&shipped(), 5, 2, |w| {
            later.extend(w.signatures);
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(later, whole.signatures[10..]);
        // A Break stops the reading.
        let mut windows = 0;
        let done = stream(&shipped(), 5, 0, |_| {
            windows += 1;
            ControlFlow::Break(())
        })
        .unwrap();
        assert!(!done);
        assert_eq!(windows, 1);
    }

    #[test]
    fn another_version_and_broken_json_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(shipped()).unwrap();
        let other = dir.path().join("v9.json");
        std::fs::write(
            &other,
            text.replacen("\"schema_version\": 1", "\"schema_version\": 9", 1),
        )
        .unwrap();
        for e in [
            scan(&other, 4).unwrap_err(),
            stream(&other, 4, 0, |_| ControlFlow::Continue(())).unwrap_err(),
        ] {
            assert!(
                matches!(e, SignatureFileError::UnsupportedVersion { found: 9, .. }),
                "{e}"
            );
        }
        let cut = dir.path().join("cut.json");
        std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
        let e = scan(&cut, 4).unwrap_err();
        assert!(matches!(e, SignatureFileError::Invalid { .. }), "{e}");
        assert!(e.to_string().contains("cut.json"), "{e}");
        let missing = dir.path().join("missing.json");
        assert!(matches!(
            scan(&missing, 4).unwrap_err(),
            SignatureFileError::Io { .. }
        ));
    }
}
