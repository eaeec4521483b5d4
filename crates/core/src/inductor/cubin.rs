//! What a Triton cubin says about itself, read without a GPU: its kernel's parameter sizes
//! (the `.nv.info.<kernel>` section's `KPARAM_INFO` entries, which the driver checks a launch
//! against) and, where Triton kept the PTX in the cubin (`.nv_debug_ptx_txt`, as Inductor's
//! debug builds do), how many elements of `x` one block covers (Inductor's `XBLOCK`).
//!
//! A cubin is a little-endian ELF64 file; only its section headers are read here.

/// The bytes of section `name` of the ELF64 file `elf`, if it has one.
pub fn elf_section<'a>(elf: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let (entsize, count, names) = (
        usize::from(u16_at(0x3a)?),
        usize::from(u16_at(0x3c)?),
        usize::from(u16_at(0x3e)?),
    );
    // (name offset, type, file offset, size) of section `i`.
    let header = |i: usize| -> Option<(usize, u32, usize, usize)> {
        let at = shoff.checked_add(i.checked_mul(entsize)?)?;
        Some((
            usize::try_from(u32_at(at)?).ok()?,
            u32_at(at + 4)?,
            usize::try_from(u64_at(at + 0x18)?).ok()?,
            usize::try_from(u64_at(at + 0x20)?).ok()?,
        ))
    };
    let (_, _, names_at, names_len) = header(names)?;
    let names_table = elf.get(names_at..names_at.checked_add(names_len)?)?;
    (0..count).find_map(|i| {
        let (name_at, kind, at, len) = header(i)?;
        let rest = names_table.get(name_at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        // SHT_NOBITS (8) sections have no bytes in the file.
        (&rest[..end] == name.as_bytes() && kind != 8).then(|| elf.get(at..at.checked_add(len)?))?
    })
}

/// The sizes in bytes of `function`'s parameters, in order, as the cubin declares them.
pub fn param_sizes(cubin: &[u8], function: &str) -> Option<Vec<u32>> {
    let info = elf_section(cubin, &format!(".nv.info.{function}"))?;
    // Entries: format (u8), attribute (u8), then a u16 that is the value, or, for format 4
    // (EIFMT_SVAL), the size of the payload that follows.
    const SVAL: u8 = 4;
    const KPARAM_INFO: u8 = 0x17;
    let mut params: Vec<(u16, u32)> = Vec::new();
    let mut at = 0;
    while at + 4 <= info.len() {
        let (format, attribute) = (info[at], info[at + 1]);
        let value = u16::from_le_bytes([info[at + 2], info[at + 3]]);
        at += 4;
        if format != SVAL {
            continue;
        }
        let payload = info.get(at..at + usize::from(value))?;
        at += usize::from(value);
        if attribute == KPARAM_INFO && payload.len() >= 12 {
            // u32 index, u16 ordinal, u16 offset, u32 flags (size in bits 18..32).
            let ordinal = u16::from_le_bytes([payload[4], payload[5]]);
            let flags = u32::from_le_bytes(payload[8..12].try_into().ok()?);
            params.push((ordinal, (flags >> 18) & 0x3fff));
        }
    }
    params.sort_by_key(|(ordinal, _)| *ordinal);
    let ordered = params
        .iter()
        .enumerate()
        .all(|(i, (ordinal, _))| usize::from(*ordinal) == i);
    ordered.then(|| params.into_iter().map(|(_, size)| size).collect())
}

/// How many `x` elements one block of the kernel covers (Inductor's `XBLOCK`), read from the
/// PTX kept in the cubin: the first use of `%ctaid.x` is `pid << k` (`2^k`), `pid * k`, or a
/// comparison of the pid itself (1). `None` when the cubin holds no PTX or the PTX starts
/// otherwise.
pub fn x_block(cubin: &[u8]) -> Option<u64> {
    let ptx = elf_section(cubin, ".nv_debug_ptx_txt")?;
    let ptx = String::from_utf8_lossy(ptx);
    let mut lines = ptx.split(['\n', '\0']).map(str::trim);
    let pid = lines.by_ref().find_map(|line| {
        let rest = line.strip_prefix("mov.u32")?.trim();
        let (register, source) = rest.split_once(',')?;
        (source.trim().trim_end_matches(';') == "%ctaid.x").then(|| register.trim().to_owned())
    })?;
    let use_of_pid = lines.find(|line| {
        line.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .skip(1)
            .any(|token| token == pid)
    })?;
    let mut words = use_of_pid.split_whitespace();
    let opcode = words.next()?;
    let operands: Vec<String> = words
        .collect::<String>()
        .trim_end_matches(';')
        .split(',')
        .map(|s| s.trim().to_owned())
        .collect();
    let immediate = operands.get(2).and_then(|k| k.parse::<u64>().ok());
    if opcode.starts_with("shl.") && operands.get(1) == Some(&pid) {
        return immediate.filter(|&k| k < 32).map(|k| 1 << k);
    }
    if opcode.starts_with("mul.lo.") {
        return immediate;
    }
    opcode.starts_with("setp.").then_some(1)
}
