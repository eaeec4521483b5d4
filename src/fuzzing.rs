//! The bodies of the fuzz targets of the readers in this crate (quant YAML, `.npy`,
//! `--input` specs), shared by the libFuzzer binaries (`fuzz/`, built with its `torch`
//! feature) and by the test that replays their corpus on stable Rust
//! (`tests/integration/fuzz_corpus.rs`). The torch-free readers' are `replay_core::fuzzing`.
//! Not an API.

use std::path::Path;

use replay_core::fuzzing::Target;

use crate::model::input_spec::InputSpec;
use crate::suites::scan::npy_io;
use crate::suites::scan::ScanDims;

/// Every target of this crate's readers.
pub const TARGETS: &[Target] = &[
    Target {
        name: "quant_yaml",
        run: quant_yaml,
    },
    Target {
        name: "npy",
        run: npy,
    },
    Target {
        name: "input_spec",
        run: input_spec,
    },
];

/// A `bench quant` config (reading it generates each entry's shapes).
pub fn quant_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((config, _warnings)) = crate::suites::quant::config::parse(text, Path::new("q.yaml"))
    {
        let _ = format!("{config:?}");
    }
}

/// The bytes as a `bench scan` edge-potential file and as a lengths file (for the edge's
/// dimensions when it reads, else for a batch of 1 to 4 from the first byte).
pub fn npy(data: &[u8]) {
    let path = Path::new("fuzz.npy");
    let dims = match npy_io::read_edge_bytes(data, path) {
        Ok((dims, values)) => {
            assert_eq!(
                values.len(),
                dims.batch * (dims.positions - 1) * dims.durations * dims.labels * dims.labels,
                "the edge's values do not fill its shape"
            );
            dims
        }
        Err(_) => ScanDims {
            batch: 1 + usize::from(data.first().copied().unwrap_or(0) & 3),
            positions: 8,
            durations: 2,
            labels: 2,
        },
    };
    if let Ok(lengths) = npy_io::read_lengths_bytes(data, path, dims) {
        assert_eq!(lengths.len(), dims.batch);
        assert!(lengths.iter().all(|&l| (1..=dims.positions).contains(&l)));
    }
}

/// A `--input` value; one that parses must print back to a value that parses the same.
pub fn input_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = text.parse::<InputSpec>() {
        let printed = spec.to_string();
        let again: InputSpec = printed
            .parse()
            .unwrap_or_else(|e| panic!("mismatch: {text:?} prints as {printed:?}, refused: {e}"));
        assert_eq!(
            again, spec,
            "mismatch: {text:?} reads differently once printed"
        );
    }
}
