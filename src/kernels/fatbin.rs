//! Reads the table of contents of a CUDA fatbin (the container nvcc's `--fatbin` writes):
//! which architectures it holds SASS for and which it holds PTX for. Used by the tests that
//! prove the embedded kernels were really compiled, and by `replay devices` to say whether
//! this build can run on the GPU it finds.
//!
//! Layout (little endian): a 16-byte header `{magic u32 = 0xBA55ED50, version u16,
//! header_size u16, payload_size u64}`, then entries, each `{kind u16 (1 = PTX, 2 = ELF),
//! version u16, header_size u32, padded_payload_size u32, ..., sm_arch u32 at offset 28}`
//! followed by its payload.

use std::fmt;

const MAGIC: u32 = 0xBA55_ED50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Ptx,
    Sass,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatbinEntry {
    pub kind: EntryKind,
    /// `90` for sm_90 / compute_90.
    pub arch: u32,
}

impl fmt::Display for FatbinEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            EntryKind::Sass => write!(f, "sm_{}", self.arch),
            EntryKind::Ptx => write!(f, "compute_{}", self.arch),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FatbinError {
    #[error("not a fatbin: bad magic {0:#x}")]
    BadMagic(u32),
    #[error("fatbin truncated at byte {0}")]
    Truncated(usize),
    #[error("fatbin entry at byte {offset} has unknown kind {kind}")]
    UnknownKind { offset: usize, kind: u16 },
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, FatbinError> {
    let b = bytes.get(at..at + 2).ok_or(FatbinError::Truncated(at))?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, FatbinError> {
    let b = bytes.get(at..at + 4).ok_or(FatbinError::Truncated(at))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(bytes: &[u8], at: usize) -> Result<u64, FatbinError> {
    Ok(u32_at(bytes, at)? as u64 | (u32_at(bytes, at + 4)? as u64) << 32)
}

/// Lists the entries of a fatbin image.
pub fn entries(bytes: &[u8]) -> Result<Vec<FatbinEntry>, FatbinError> {
    let magic = u32_at(bytes, 0)?;
    if magic != MAGIC {
        return Err(FatbinError::BadMagic(magic));
    }
    let header_size = u16_at(bytes, 6)? as usize;
    let payload_size = u64_at(bytes, 8)? as usize;
    let end = header_size
        .checked_add(payload_size)
        .ok_or(FatbinError::Truncated(8))?;
    if end > bytes.len() {
        return Err(FatbinError::Truncated(bytes.len()));
    }
    let mut out = Vec::new();
    let mut offset = header_size;
    while offset < end {
        let kind = match u16_at(bytes, offset)? {
            1 => EntryKind::Ptx,
            2 => EntryKind::Sass,
            kind => return Err(FatbinError::UnknownKind { offset, kind }),
        };
        let entry_header = u32_at(bytes, offset + 4)? as usize;
        let padded_payload = u32_at(bytes, offset + 8)? as usize;
        let arch = u32_at(bytes, offset + 28)?;
        out.push(FatbinEntry { kind, arch });
        let next = offset + entry_header + padded_payload;
        if entry_header == 0 || next <= offset {
            return Err(FatbinError::Truncated(offset));
        }
        offset = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: u16, arch: u32, payload: usize) -> Vec<u8> {
        let mut e = vec![0u8; 64];
        e[0..2].copy_from_slice(&kind.to_le_bytes());
        e[4..8].copy_from_slice(&64u32.to_le_bytes());
        e[8..12].copy_from_slice(&(payload as u32).to_le_bytes());
        e[28..32].copy_from_slice(&arch.to_le_bytes());
        e.extend(std::iter::repeat_n(0xAB, payload));
        e
    }

    fn fatbin(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut f = Vec::new();
        f.extend(MAGIC.to_le_bytes());
        f.extend(1u16.to_le_bytes());
        f.extend(16u16.to_le_bytes());
        f.extend((body.len() as u64).to_le_bytes());
        f.extend(body);
        f
    }

    #[test]
    fn lists_sass_and_ptx_entries() {
        let image = fatbin(&[entry(2, 80, 128), entry(1, 90, 40), entry(2, 90, 256)]);
        let got = entries(&image).unwrap();
        let names: Vec<String> = got.iter().map(|e| e.to_string()).collect();
        assert_eq!(names, ["sm_80", "compute_90", "sm_90"]);
    }

    #[test]
    fn rejects_garbage_and_truncation() {
        assert_eq!(
            entries(b"hello world, not a fatbin"),
            Err(FatbinError::BadMagic(u32::from_le_bytes(*b"hell")))
        );
        let image = fatbin(&[entry(2, 80, 128)]);
        assert!(matches!(
            entries(&image[..100]),
            Err(FatbinError::Truncated(_))
        ));
        assert!(matches!(entries(&[]), Err(FatbinError::Truncated(0))));
        let odd = fatbin(&[entry(7, 80, 8)]);
        assert!(matches!(
            entries(&odd),
            Err(FatbinError::UnknownKind { kind: 7, .. })
        ));
    }
}
