//! A generator of Kineto-like trace text from fuzzer bytes ([`arbitrary::Unstructured`]):
//! events with the keys the reader keeps (`ph`, `cat`, `name`, `pid`, `tid`, `ts`, `dur` and
//! the `args` it reads) in any order, spelled every way profilers and damaged files spell
//! them (integers past i64, fractions, exponents, hex and decimal strings, escapes, lone
//! surrogates, `}, {` inside names, nested unknown values, duplicate keys), and whole
//! documents around them (top-level keys before and after `traceEvents`, one line or
//! indented), so that the fuzzer spends its time on what the scanner and the chunked parse
//! decide rather than on finding JSON's grammar.

use arbitrary::{Result, Unstructured};

const CATEGORIES: &[&str] = &[
    "kernel",
    "cpu_op",
    "cuda_runtime",
    "cuda_driver",
    "gpu_memcpy",
    "gpu_memset",
    "cuda_sync",
    "python_function",
    "user_annotation",
    "gpu_user_annotation",
    "ac2g",
    "fwdbwd",
    "Kernel",
    "Operator",
    "Runtime",
    "Memcpy",
    "async_gpu",
    "Trace",
];

const PHASES: &[&str] = &["X", "X", "X", "f", "s", "t", "i", "M", "C", "B", "E"];

const NAMES: &[&str] = &[
    "aten::mm",
    "aten::add_",
    "cudaLaunchKernel",
    "cuLaunchKernel",
    "hipMemcpyAsync",
    "cudaStreamWaitEvent",
    "cudaEventRecord",
    "void gemm<float>(int)",
    "Memcpy HtoD (Pageable -> Device)",
    "Memset (Device)",
    "ProfilerStep#1",
    "nn.Module: Linear_0",
    "nn.Module: ",
    "Stream Sync",
    "ncclKernel_AllReduce_RING_LL_Sum_float",
    "late}, {",
];

const ARG_KEYS: &[&str] = &[
    "External id",
    "external id",
    "correlation",
    "stream",
    "device",
    "bytes",
    "size",
    "grid",
    "block",
    "cbid",
    "cid",
    "Sequence number",
    "Fwd thread id",
    "Record function id",
    "wait_on_stream",
    "wait_on_cuda_event_record_corr_id",
    "Input Dims",
    "Input type",
    "Input Strides",
    "Concrete Inputs",
    "blocks per SM",
    "registers per thread",
];

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "7",
    "211",
    "1.5",
    "2.25",
    "-1.5e3",
    "0E0",
    "1e5",
    "1E+5",
    "1e-7",
    "4458676522690.655",
    "1695835572943613",
    "999999999999999999",
    "-999999999999999999",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "4294967295",
    "4294967296",
    "1e400",
    "-1E+999",
    "0.0000000000000000000001",
    "179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "1797693134862315700000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
];

const STRING_PIECES: &[&str] = &[
    "a",
    "Z",
    " ",
    "0",
    "25738",
    "0x0",
    "0x1F",
    "-12",
    "é",
    "😀",
    "\\\"",
    "\\\\",
    "\\/",
    "\\n",
    "\\t",
    "\\u00e9",
    "\\u0000",
    "\\ud83d\\ude00",
    "\\ud800",
    "\\udc00x",
    "}, {",
    "},\n{",
    ":",
    ",",
    "[",
    "]",
    "nn.Module: ",
];

/// How a generated document is laid out.
#[derive(Clone, Copy)]
struct Layout {
    /// Line breaks and indentation between entries (what the chunked parse's cuts look for).
    pretty: bool,
    /// Spaces around `:` and `,`.
    spaced: bool,
}

/// One event object, as text.
pub fn event(u: &mut Unstructured<'_>) -> Result<String> {
    let layout = Layout {
        pretty: u.arbitrary()?,
        spaced: u.arbitrary()?,
    };
    let mut out = String::new();
    write_event(u, &mut out, layout, 1)?;
    Ok(out)
}

/// A whole trace document, as text.
pub fn document(u: &mut Unstructured<'_>) -> Result<String> {
    let layout = Layout {
        pretty: u.ratio(3, 4)?,
        spaced: u.arbitrary()?,
    };
    let mut members: Vec<String> = Vec::new();
    let top = |key: &str, value: String| format!("\"{key}\":{value}");
    if u.arbitrary()? {
        members.push(top("schemaVersion", number(u)?));
    }
    if u.arbitrary()? {
        members.push(top(
            "deviceProperties",
            "[\n    {\n      \"id\": 0, \"name\": \"A\"\n    },\n    {\n      \"id\": 1\n    }\n  ]"
                .to_owned(),
        ));
    }
    if u.arbitrary()? {
        let version = if u.arbitrary()? {
            "\"2.6.0+cu124\"".to_owned()
        } else {
            value(u, 0)?
        };
        members.push(top(
            "metadata",
            format!("{{\"system\": {{\"torch_env_info\": {{\"torch_version\": {version}}}}}}}"),
        ));
    }
    let mut events = String::from("[");
    let count = u.int_in_range(0..=40)?;
    for i in 0..count {
        if i > 0 {
            events.push(',');
        }
        if layout.pretty {
            events.push_str("\n  ");
        }
        if u.ratio(1, 30)? {
            events.push_str(&value(u, 0)?);
        } else {
            write_event(u, &mut events, layout, 1)?;
        }
    }
    events.push_str(if layout.pretty { "\n  ]" } else { "]" });
    members.push(top("traceEvents", events));
    for _ in 0..u.int_in_range(0..=2)? {
        let member = match u.int_in_range(0..=4)? {
            0 => top("traceName", string(u)?),
            1 => top("baseTimeNanoseconds", number(u)?),
            2 => top("displayTimeUnit", "\"ms\"".to_owned()),
            3 => top("distributedInfo", value(u, 0)?),
            _ => top(&plain_text(u)?, value(u, 0)?),
        };
        members.push(member);
    }
    // Shuffle a little: `traceEvents` is not always where Kineto puts it.
    if members.len() > 1 && u.ratio(1, 4)? {
        let from = u.choose_index(members.len())?;
        let to = u.choose_index(members.len())?;
        members.swap(from, to);
    }
    let separator = if layout.pretty { ",\n  " } else { "," };
    let open = if layout.pretty { "{\n  " } else { "{" };
    let close = if layout.pretty { "\n}\n" } else { "}" };
    Ok(format!("{open}{}{close}", members.join(separator)))
}

fn write_event(
    u: &mut Unstructured<'_>,
    out: &mut String,
    layout: Layout,
    indent: usize,
) -> Result<()> {
    let mut members: Vec<(String, String)> = Vec::new();
    for _ in 0..u.int_in_range(0..=9)? {
        let (key, value) = match u.int_in_range(0..=10)? {
            0 => ("ph", quoted_choice(u, PHASES)?),
            1 | 2 => ("cat", quoted_choice(u, CATEGORIES)?),
            3 => ("name", name(u)?),
            4 => ("pid", execution_id(u)?),
            5 => ("tid", execution_id(u)?),
            6 => ("ts", number_or_value(u)?),
            7 => ("dur", number_or_value(u)?),
            8 | 9 => ("args", args(u, layout, indent + 1)?),
            _ => ("id", value(u, 0)?),
        };
        members.push((key.to_owned(), value));
    }
    // Kineto's own order first most of the time: ph, cat, name before args.
    if u.ratio(2, 3)? {
        let rank = |key: &str| match key {
            "ph" => 0,
            "cat" => 1,
            "name" => 2,
            "args" => 4,
            _ => 3,
        };
        members.sort_by_key(|(key, _)| rank(key));
    }
    write_object(out, &members, layout, indent);
    Ok(())
}

fn args(u: &mut Unstructured<'_>, layout: Layout, indent: usize) -> Result<String> {
    if u.ratio(1, 20)? {
        return value(u, 0);
    }
    let mut members: Vec<(String, String)> = Vec::new();
    for _ in 0..u.int_in_range(0..=8)? {
        let key = *u.choose(ARG_KEYS)?;
        let value = match key {
            "grid" | "block" => dim3(u)?,
            "Input Dims" | "Input Strides" | "Input type" | "Concrete Inputs" => value(u, 0)?,
            _ => lenient_int(u)?,
        };
        members.push((key.to_owned(), value));
    }
    if u.ratio(1, 4)? {
        members.push((plain_text(u)?, value(u, 0)?));
    }
    let mut out = String::new();
    write_object(&mut out, &members, layout, indent);
    Ok(out)
}

fn write_object(out: &mut String, members: &[(String, String)], layout: Layout, indent: usize) {
    let (colon, comma) = if layout.spaced {
        (": ", ", ")
    } else {
        (":", ",")
    };
    let pad = |depth: usize| format!("\n{}", "  ".repeat(depth));
    out.push('{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push_str(comma.trim_end());
        }
        if layout.pretty {
            out.push_str(&pad(indent + 1));
        } else if i > 0 && layout.spaced {
            out.push(' ');
        }
        out.push('"');
        out.push_str(key);
        out.push('"');
        out.push_str(colon);
        out.push_str(value);
    }
    if layout.pretty && !members.is_empty() {
        out.push_str(&pad(indent));
    }
    out.push('}');
}

fn quoted_choice(u: &mut Unstructured<'_>, choices: &[&str]) -> Result<String> {
    Ok(match u.int_in_range(0..=9)? {
        0 => string(u)?,
        1 => "null".to_owned(),
        2 => value(u, 0)?,
        _ => format!("\"{}\"", u.choose(choices)?),
    })
}

fn name(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => string(u)?,
        1 => format!("\"{}{}\"", u.choose(NAMES)?, plain_text(u)?),
        _ => format!("\"{}\"", u.choose(NAMES)?),
    })
}

fn execution_id(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=6)? {
        0 | 1 => number(u)?,
        2 => format!(
            "\"{}\"",
            u.choose(&["25738", "stream 7", "Spans", "0x1f", "-3", ""])?
        ),
        3 => string(u)?,
        4 => "null".to_owned(),
        5 => format!("{}", u.arbitrary::<i64>()?),
        _ => value(u, 0)?,
    })
}

fn lenient_int(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=7)? {
        0..=2 => number(u)?,
        3 => format!("{}", u.arbitrary::<i64>()?),
        4 => format!(
            "\"{}\"",
            u.choose(&["0x0", "0x7f", "2560", "-5", "0X1", "1.5", ""])?
        ),
        5 => string(u)?,
        _ => value(u, 0)?,
    })
}

fn dim3(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 6)? {
        return value(u, 0);
    }
    let count = if u.ratio(3, 4)? {
        3
    } else {
        u.int_in_range(0..=5)?
    };
    let items: Vec<String> = (0..count).map(|_| lenient_int(u)).collect::<Result<_>>()?;
    Ok(format!("[{}]", items.join(", ")))
}

fn number_or_value(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 8)? {
        value(u, 0)
    } else {
        number(u)
    }
}

fn number(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => format!("{}", u.arbitrary::<u64>()?),
        1 => format!("{}.{:03}", u.arbitrary::<u32>()?, u.int_in_range(0..=999)?),
        _ => (*u.choose(NUMBERS)?).to_owned(),
    })
}

/// A JSON string of pieces with and without escapes (some of them invalid).
fn string(u: &mut Unstructured<'_>) -> Result<String> {
    let mut text = String::from("\"");
    for _ in 0..u.int_in_range(0..=6)? {
        text.push_str(u.choose(STRING_PIECES)?);
    }
    if u.ratio(1, 40)? {
        text.push(*u.choose(&['\u{1}', '\n', '\\'])?);
    }
    text.push('"');
    Ok(text)
}

/// Text without escapes or quotes, for keys.
fn plain_text(u: &mut Unstructured<'_>) -> Result<String> {
    let length = u.int_in_range(0..=8)?;
    (0..length)
        .map(|_| Ok(*u.choose(&['a', 'b', 'x', ' ', '_', 'é', '#', '}', '{', ','])?))
        .collect()
}

/// Any JSON value (nested at most a few levels), sometimes not quite JSON.
fn value(u: &mut Unstructured<'_>, depth: usize) -> Result<String> {
    let choice = if depth >= 4 {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=7)?
    };
    Ok(match choice {
        0 => number(u)?,
        1 => string(u)?,
        2 => (*u.choose(&["true", "false", "null"])?).to_owned(),
        3 => (*u.choose(&["[]", "{}", "[ ]", "{ }"])?).to_owned(),
        4 => (*u.choose(&[
            "nul", "tru", "01", "1.", ".5", "-", "+1", "1e", "[1,]", "{\"a\"}",
        ])?)
        .to_owned(),
        5 | 6 => {
            let items: Vec<String> = (0..u.int_in_range(0..=4)?)
                .map(|_| value(u, depth + 1))
                .collect::<Result<_>>()?;
            format!("[{}]", items.join(", "))
        }
        _ => {
            let items: Vec<String> = (0..u.int_in_range(0..=3)?)
                .map(|_| Ok(format!("\"{}\": {}", plain_text(u)?, value(u, depth + 1)?)))
                .collect::<Result<_>>()?;
            format!("{{{}}}", items.join(", "))
        }
    })
}
