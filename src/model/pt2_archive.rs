//! What a `.pt2` file holds, read from its zip listing alone (no libtorch, no Python): a
//! PyTorch 2 archive (`archive_format` beside its folders) holding AOTInductor-compiled models
//! (`data/aotinductor/<model>/`), a `torch.export` ExportedProgram (`models/<model>.json`), or
//! neither. TorchScript models are zip archives too, without `archive_format`.

use std::collections::BTreeSet;
use std::path::Path;

/// The folder of AOTInductor's compiled models inside a PT2 archive.
const AOTINDUCTOR_DIR: &str = "data/aotinductor/";
/// The folder of ExportedPrograms' model definitions inside a PT2 archive.
const MODELS_DIR: &str = "models/";
/// The file every PT2 archive has at its root (holding `pt2`).
const ARCHIVE_FORMAT: &str = "archive_format";

/// What a zip archive is, by the names of its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveKind {
    /// Not a PT2 archive (a TorchScript model, or some other zip).
    NotPt2,
    /// A PT2 archive with AOTInductor-compiled models, by name (`model` by default).
    AotiPackage { models: BTreeSet<String> },
    /// A PT2 archive with ExportedPrograms only: it must be compiled before `full` can run it.
    ExportedProgram,
    /// A PT2 archive with neither.
    OtherPt2,
}

/// Why the archive could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ArchiveError(String);

/// Lists the zip archive at `path` and says what it is.
pub fn inspect(path: &Path) -> Result<ArchiveKind, ArchiveError> {
    let file =
        std::fs::File::open(path).map_err(|e| ArchiveError(format!("cannot open it: {e}")))?;
    let archive = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| ArchiveError(format!("not a readable zip archive: {e}")))?;
    Ok(kind_of(archive.file_names()))
}

/// The kind of an archive whose entries are `names` (`root/archive_format`, ...): every entry
/// of a PT2 archive sits under one root folder named after the file.
pub fn kind_of<'n>(names: impl IntoIterator<Item = &'n str>) -> ArchiveKind {
    let mut pt2 = false;
    let mut exported = false;
    let mut models = BTreeSet::new();
    for name in names {
        let inner = name.split_once('/').map_or(name, |(_, rest)| rest);
        if inner == ARCHIVE_FORMAT || name == ARCHIVE_FORMAT {
            pt2 = true;
        }
        if let Some(rest) = inner.strip_prefix(AOTINDUCTOR_DIR) {
            if let Some((model, _)) = rest.split_once('/') {
                models.insert(model.to_string());
            }
        }
        if inner.starts_with(MODELS_DIR) && inner.ends_with(".json") {
            exported = true;
        }
    }
    match (pt2, models.is_empty(), exported) {
        (false, _, _) => ArchiveKind::NotPt2,
        (true, false, _) => ArchiveKind::AotiPackage { models },
        (true, true, true) => ArchiveKind::ExportedProgram,
        (true, true, false) => ArchiveKind::OtherPt2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_are_told_apart_by_their_entries() {
        let aoti = [
            "m/archive_format",
            "m/data/aotinductor/model/cxyz.wrapper.so",
            "m/data/aotinductor/model/cxyz_metadata.json",
        ];
        assert_eq!(
            kind_of(aoti),
            ArchiveKind::AotiPackage {
                models: BTreeSet::from(["model".to_string()])
            }
        );
        let exported = [
            "m/archive_format",
            "m/models/model.json",
            "m/data/weights/weight_0",
        ];
        assert_eq!(kind_of(exported), ArchiveKind::ExportedProgram);
        let torchscript = ["m/data.pkl", "m/code/__torch__.py", "m/version"];
        assert_eq!(kind_of(torchscript), ArchiveKind::NotPt2);
        assert_eq!(
            kind_of(["m/archive_format", "m/extra/x"]),
            ArchiveKind::OtherPt2
        );
    }
}
