//! Reading the direction and memory kinds of a copy from its name.
//!
//! Kineto names copies `Memcpy HtoD (Pageable -> Device)`, `Memcpy DtoH (Device -> Pinned)`,
//! `Memcpy DtoD (Device -> Device)`, `Memcpy PtoP (Device -> Device)`; ROCm writes
//! `Memcpy HtoD (Host -> Device)`.

use super::schema::{MemcpyKind, MemoryKind};

/// Direction and endpoints of a copy, from its event name.
pub fn parse_memcpy_name(name: &str) -> Option<(MemcpyKind, MemoryKind, MemoryKind)> {
    let rest = name.strip_prefix("Memcpy ")?;
    let (kind_text, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let kind = match kind_text {
        "HtoD" => MemcpyKind::HtoD,
        "DtoH" => MemcpyKind::DtoH,
        "DtoD" => MemcpyKind::DtoD,
        "HtoH" => MemcpyKind::HtoH,
        "PtoP" => MemcpyKind::PtoP,
        _ => return None,
    };
    let endpoints = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|r| r.split_once("->"));
    let (src, dst) = match endpoints {
        Some((src, dst)) => (memory_kind(src.trim()), memory_kind(dst.trim())),
        None => default_endpoints(kind),
    };
    Some((kind, src, dst))
}

fn memory_kind(text: &str) -> MemoryKind {
    match text {
        "Pageable" => MemoryKind::Pageable,
        "Pinned" => MemoryKind::Pinned,
        "Device" => MemoryKind::Device,
        "Host" => MemoryKind::Host,
        "Managed" => MemoryKind::Managed,
        "Array" => MemoryKind::Array,
        _ => MemoryKind::Unknown,
    }
}

/// Endpoints implied by the direction alone, for names without the parenthesis.
fn default_endpoints(kind: MemcpyKind) -> (MemoryKind, MemoryKind) {
    match kind {
        MemcpyKind::HtoD => (MemoryKind::Host, MemoryKind::Device),
        MemcpyKind::DtoH => (MemoryKind::Device, MemoryKind::Host),
        MemcpyKind::DtoD | MemcpyKind::PtoP => (MemoryKind::Device, MemoryKind::Device),
        MemcpyKind::HtoH => (MemoryKind::Host, MemoryKind::Host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_names_of_every_platform_parse() {
        assert_eq!(
            parse_memcpy_name("Memcpy HtoD (Pageable -> Device)"),
            Some((MemcpyKind::HtoD, MemoryKind::Pageable, MemoryKind::Device))
        );
        assert_eq!(
            parse_memcpy_name("Memcpy DtoH (Device -> Pinned)"),
            Some((MemcpyKind::DtoH, MemoryKind::Device, MemoryKind::Pinned))
        );
        assert_eq!(
            parse_memcpy_name("Memcpy HtoD (Host -> Device)"),
            Some((MemcpyKind::HtoD, MemoryKind::Host, MemoryKind::Device))
        );
        assert_eq!(
            parse_memcpy_name("Memcpy PtoP"),
            Some((MemcpyKind::PtoP, MemoryKind::Device, MemoryKind::Device))
        );
        assert_eq!(parse_memcpy_name("Memset (Device)"), None);
    }
}
