//! A model file loaded as what it holds: a PT2 archive (`.pt2`: an AOTInductor package; an
//! ExportedProgram is refused with what to do) or a TorchScript model (anything else).

use std::path::Path;

use super::aoti_package::AotiPackage;
use super::pt2_archive::{self, ArchiveKind};
use super::torchscript::{check_model_file, TorchScriptModel};
use super::whole_model::WholeModel;
use crate::error::{Error, Result};

/// True when `path` names or holds a PT2 archive: a `.pt2` name, or a zip with
/// `archive_format` whatever its name.
pub fn is_pt2(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pt2"))
        || matches!(pt2_archive::inspect(path), Ok(kind) if kind != ArchiveKind::NotPt2)
}

/// Refuses a `.pt2` path that is missing, a folder or an empty file, in those words.
fn check_pt2_file(path: &Path) -> Result<()> {
    let problem = match std::fs::metadata(path) {
        Err(_) => "no such model file",
        Ok(meta) if meta.is_dir() => "is a folder, not a model file",
        Ok(meta) if meta.len() == 0 => "is empty (0 bytes), not an AOTInductor package",
        Ok(_) => return Ok(()),
    };
    Err(Error::from(replay_core::Error::BadInput {
        path: path.to_path_buf(),
        message: format!("{problem} (compile one with `replay export --format pt2 --aoti`)"),
    }))
}

/// Loads the model at `path` onto `device`: an AOTInductor package or a TorchScript model.
pub fn load(path: &Path, device: &crate::device::Device) -> Result<Box<dyn WholeModel>> {
    if is_pt2(path) {
        check_pt2_file(path)?;
        return Ok(Box::new(AotiPackage::load(path, device)?));
    }
    check_model_file(path)?;
    Ok(Box::new(TorchScriptModel::load(path, device)?))
}
