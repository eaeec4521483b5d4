//! Typed model of the Kineto events that linking and classification use.
//!
//! The JSON spelling differs between profiler eras (PyTorch 1.8-1.10 wrote `Operator`,
//! `Runtime`, `Kernel`; newer ones `cpu_op`, `cuda_runtime`, `kernel`; timestamps went
//! from integer absolute microseconds to fractional microseconds relative to
//! `baseTimeNanoseconds`). This module is the one place where those spellings become a
//! single typed model, so nothing downstream needs to know which era a trace is from.

use super::strings::StrId;

/// Prefix of the `python_function` events that delimit `nn.Module` calls
/// (`with_modules=True`); the only python frames worth keeping. Lives with the categories so
/// that the parser (`raw`) and the assembler read it without importing each other.
pub const MODULE_PREFIX: &str = "nn.Module: ";

/// Nanoseconds, on the trace's own time axis (absolute Unix time for old traces,
/// relative to `baseTimeNanoseconds` for PyTorch 2.4+). Integers so that interval
/// containment is exact: fractional microseconds in the file have at most 3 decimals.
pub type Nanos = i64;

/// What kind of activity an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// An ATen or custom operator on a CPU thread (`cpu_op`, PyTorch 1.8-1.10 `Operator`).
    CpuOp,
    /// A `record_function` range such as `ProfilerStep#N` (`user_annotation`).
    UserAnnotation,
    /// The GPU-side copy of a user annotation (`gpu_user_annotation`).
    GpuUserAnnotation,
    /// A CUDA/HIP runtime API call (`cuda_runtime`, old `Runtime`).
    CudaRuntime,
    /// A CUDA driver API call such as `cuLaunchKernel` (`cuda_driver`).
    CudaDriver,
    /// A GPU kernel execution (`kernel`, old `Kernel`).
    Kernel,
    /// A GPU copy (`gpu_memcpy`, old `Memcpy`).
    GpuMemcpy,
    /// A GPU memset (`gpu_memset`, old `Memset`).
    GpuMemset,
    /// A stream or event synchronisation (`cuda_sync`).
    CudaSync,
    /// A Python frame or `nn.Module` range (`python_function`, with_stack / with_modules).
    PythonFunction,
    /// Flow arrows from a launch to its GPU work (`ac2g`, old `async`, kineto 2021-22
    /// `async_cpu_to_gpu` / `async_gpu`).
    FlowCpuToGpu,
    /// Flow arrows from a forward op to its backward (`fwdbwd`).
    FlowForwardBackward,
    /// Anything else (`cpu_instant_event`, `overhead`, `Trace`, metadata...): ignored.
    Unknown,
}

impl Category {
    /// The category an event's `cat` string names, in any profiler era.
    pub fn from_trace_name(cat: &str) -> Category {
        match cat {
            "cpu_op" | "Operator" => Category::CpuOp,
            "user_annotation" => Category::UserAnnotation,
            "gpu_user_annotation" => Category::GpuUserAnnotation,
            "cuda_runtime" | "Runtime" => Category::CudaRuntime,
            "cuda_driver" => Category::CudaDriver,
            "kernel" | "Kernel" => Category::Kernel,
            "gpu_memcpy" | "Memcpy" => Category::GpuMemcpy,
            "gpu_memset" | "Memset" => Category::GpuMemset,
            "cuda_sync" => Category::CudaSync,
            "python_function" => Category::PythonFunction,
            "ac2g" | "async" | "async_cpu_to_gpu" | "async_gpu" => Category::FlowCpuToGpu,
            "fwdbwd" => Category::FlowForwardBackward,
            _ => Category::Unknown,
        }
    }

    /// Work that occupies a GPU: the events that signatures account for.
    pub fn is_gpu_activity(self) -> bool {
        matches!(
            self,
            Category::Kernel | Category::GpuMemcpy | Category::GpuMemset
        )
    }

    /// Host API calls that can launch GPU work.
    pub fn is_launch_call(self) -> bool {
        matches!(self, Category::CudaRuntime | Category::CudaDriver)
    }

    /// Categories whose complete (`ph: "X"`) events are kept in a parsed [`super::Trace`].
    /// Flows are not kept: linking goes by correlation id, which every era records.
    pub fn is_kept(self) -> bool {
        !matches!(
            self,
            Category::Unknown
                | Category::FlowCpuToGpu
                | Category::FlowForwardBackward
                | Category::GpuUserAnnotation
        )
    }

    /// Stable lowercase name used in messages and counts.
    pub fn label(self) -> &'static str {
        match self {
            Category::CpuOp => "cpu_op",
            Category::UserAnnotation => "user_annotation",
            Category::GpuUserAnnotation => "gpu_user_annotation",
            Category::CudaRuntime => "cuda_runtime",
            Category::CudaDriver => "cuda_driver",
            Category::Kernel => "kernel",
            Category::GpuMemcpy => "gpu_memcpy",
            Category::GpuMemset => "gpu_memset",
            Category::CudaSync => "cuda_sync",
            Category::PythonFunction => "python_function",
            Category::FlowCpuToGpu => "ac2g",
            Category::FlowForwardBackward => "fwdbwd",
            Category::Unknown => "unknown",
        }
    }
}

/// A `pid` or `tid`: an integer for OS processes/threads and devices/streams, a label for
/// the profiler's own rows (`"Spans"`, `"PyTorch Profiler"`, and every tid of PyTorch
/// 1.8/1.9, e.g. `"stream 7"`). Numeric strings such as `"25738"` are read as numbers so
/// that an op written with tid `"25738"` and a flow written with tid `25738` agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExecutionId {
    Number(i64),
    Label(StrId),
}

/// Which spelling of the external id an event carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExternalIdKey {
    /// `"External id"` (PyTorch 1.11 and later).
    Capitalised,
    /// `"external id"` (PyTorch 1.8-1.10).
    Lowercase,
}

/// The profiler's external id of an event, with the key it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExternalId {
    pub value: i64,
    pub key: ExternalIdKey,
}

/// CUDA launch dimensions (`grid`, `block`).
pub type Dim3 = [u32; 3];

/// The shapes and values of an op's inputs, as raw JSON text exactly as recorded
/// (`record_shapes=True`). Kept as text because they are only ever compared for equality
/// (signature keys) or parsed for the few GEMM ops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RecordedInputs {
    pub dims: Option<StrId>,
    pub types: Option<StrId>,
    pub strides: Option<StrId>,
    pub concrete: Option<StrId>,
}

impl RecordedInputs {
    pub fn is_recorded(&self) -> bool {
        self.dims.is_some() || self.types.is_some()
    }
}

/// The `args` of an event that classification uses; everything else is dropped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventArgs {
    pub external_id: Option<ExternalId>,
    pub correlation: Option<i64>,
    pub stream: Option<i64>,
    pub device: Option<i64>,
    /// `bytes` of a GPU copy/memset, or `size` of a ROCm `hipMemcpy*` runtime call.
    pub bytes: Option<u64>,
    pub grid: Option<Dim3>,
    pub block: Option<Dim3>,
    /// CUPTI callback id of a runtime/driver call (`cbid`, ROCm `cid`).
    pub callback_id: Option<i64>,
    pub sequence_number: Option<i64>,
    pub forward_thread_id: Option<i64>,
    /// `Record function id`, the op's `rf_id` in an Execution Trace recorded in the same
    /// step (`None` where the profiler wrote 0: no observer asked for ids).
    pub record_function_id: Option<i64>,
    /// What a `cuda_sync` row of a `cudaStreamWaitEvent` says it waits for (newer kineto);
    /// boxed, as almost no event has it.
    pub wait_on: Option<Box<WaitOn>>,
    pub inputs: RecordedInputs,
}

/// The event a stream waits for, as kineto's `cuda_sync` row of the wait names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOn {
    /// The stream the event was recorded on (`wait_on_stream`).
    pub stream: i64,
    /// The correlation id of the `cudaEventRecord` call (`wait_on_cuda_event_record_corr_id`).
    pub record_correlation: i64,
}

/// One complete (`ph: "X"`) event of a kept category.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub category: Category,
    pub name: StrId,
    pub pid: ExecutionId,
    pub tid: ExecutionId,
    pub ts_ns: Nanos,
    pub dur_ns: Nanos,
    pub args: EventArgs,
}

impl Event {
    /// End of the event's interval. Saturates so that an absurd timestamp in a damaged
    /// file cannot overflow.
    pub fn end_ns(&self) -> Nanos {
        self.ts_ns.saturating_add(self.dur_ns)
    }

    /// Whether `[self.ts, self.end]` contains `[other.ts, other.end]`, bounds included:
    /// a parent op and its first child can start on the same microsecond.
    pub fn contains(&self, other: &Event) -> bool {
        self.ts_ns <= other.ts_ns && other.end_ns() <= self.end_ns()
    }
}

/// A `ts`/`dur` as written in the file (a JSON number of microseconds, integer or with
/// decimals), converted exactly to [`Nanos`].
///
/// Decimal text is converted digit by digit rather than through `f64`: a relative
/// timestamp such as `4458676522690.655` has 16 significant digits, one more than an
/// `f64` keeps exactly once multiplied by 1000, and an off-by-one nanosecond would break
/// the inclusive containment that links a launch to its op. Digits beyond the third
/// decimal are rounded. Exponent notation, which no profiler writes, goes through `f64`.
/// Returns `None` for text that is not a number, or a time beyond ±292 years.
pub fn micros_text_to_nanos(text: &str) -> Option<Nanos> {
    // Most timestamps are unsigned integers: read those in one pass (18 digits at most fit
    // an i64; the product with 1000 is checked, as below).
    if (1..=18).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()) {
        let micros = text
            .bytes()
            .fold(0i64, |value, digit| value * 10 + i64::from(digit - b'0'));
        return micros.checked_mul(1000);
    }
    // Most others are `digits.digits` (Kineto's `ts` with three decimals): one pass too.
    if let Some(nanos) = plain_decimal_micros(text.as_bytes()) {
        return Some(nanos);
    }
    any_micros_text_to_nanos(text)
}

/// [`micros_text_to_nanos`] for any text, without its fast paths.
fn any_micros_text_to_nanos(text: &str) -> Option<Nanos> {
    let text = text.trim();
    if text.contains(['e', 'E']) {
        return micros_to_nanos_float(text.parse::<f64>().ok()?);
    }
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let mut nanos = whole.parse::<i64>().ok()?.checked_mul(1000)?;
    let mut scale = 100;
    for digit in fraction.bytes().take(3) {
        nanos = nanos.checked_add(i64::from(digit - b'0') * scale)?;
        scale /= 10;
    }
    if fraction.as_bytes().get(3).is_some_and(|&d| d >= b'5') {
        nanos = nanos.checked_add(1)?;
    }
    Some(if negative { -nanos } else { nanos })
}

/// `text` as [`micros_text_to_nanos`] reads it, where it is 1 to 18 digits, `.` and one
/// digit or more (no sign, no spaces); `None` for anything else, left to the general reading.
fn plain_decimal_micros(text: &[u8]) -> Option<Nanos> {
    let point = text.iter().position(|&b| b == b'.')?;
    let (whole, fraction) = (text.get(..point)?, text.get(point + 1..)?);
    if !(1..=18).contains(&whole.len()) || fraction.is_empty() {
        return None;
    }
    let mut micros = 0i64;
    for &digit in whole {
        if !digit.is_ascii_digit() {
            return None;
        }
        micros = micros * 10 + i64::from(digit - b'0');
    }
    let mut nanos = 0i64;
    for (i, &digit) in fraction.iter().enumerate() {
        if !digit.is_ascii_digit() {
            return None;
        }
        match i {
            0..=2 => nanos = nanos * 10 + i64::from(digit - b'0'),
            3 if digit >= b'5' => nanos += 1,
            _ => {}
        }
    }
    // Fewer than three decimals: `1.5` is 1500 ns.
    for _ in fraction.len()..3 {
        nanos *= 10;
    }
    micros.checked_mul(1000)?.checked_add(nanos)
}

/// Fractional microseconds to [`Nanos`], for exponent notation.
pub fn micros_to_nanos_float(micros: f64) -> Option<Nanos> {
    let nanos = (micros * 1000.0).round();
    // i64::MAX as f64 rounds up to 2^63, which is out of range, hence the strict bound.
    if nanos.is_finite() && nanos > -9.2e18 && nanos < 9.2e18 {
        Some(nanos as i64)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass reading of `digits.digits` gives what the general reading gives, on every
    /// length of whole and fraction and every rounding digit.
    #[test]
    fn plain_decimals_read_as_the_general_reading_reads_them() {
        let mut checked = 0;
        for whole in [
            "0",
            "7",
            "12",
            "4458676522690",
            "999999999999999999",
            "1000000000000000000",
        ] {
            for fraction in [
                "", "0", "5", "65", "655", "6554", "6555", "9995", "99999", "1234567",
            ] {
                for text in [
                    format!("{whole}.{fraction}"),
                    format!("{whole}.{fraction}x"),
                ] {
                    let general = any_micros_text_to_nanos(&text);
                    if let Some(fast) = plain_decimal_micros(text.as_bytes()) {
                        assert_eq!(Some(fast), general, "{text}");
                        checked += 1;
                    }
                    assert_eq!(micros_text_to_nanos(&text), general, "{text}");
                }
            }
        }
        assert_eq!(
            plain_decimal_micros(b"4458676522690.655"),
            Some(4_458_676_522_690_655)
        );
        assert_eq!(plain_decimal_micros(b"1.5"), Some(1500));
        assert_eq!(plain_decimal_micros(b"1.0005"), Some(1001));
        // Four wholes fit (the last two overflow once in nanoseconds), nine fractions each.
        assert_eq!(checked, 36);
    }

    #[test]
    fn every_era_spelling_maps_to_one_category() {
        assert_eq!(Category::from_trace_name("Operator"), Category::CpuOp);
        assert_eq!(Category::from_trace_name("cpu_op"), Category::CpuOp);
        assert_eq!(Category::from_trace_name("Runtime"), Category::CudaRuntime);
        assert_eq!(Category::from_trace_name("Kernel"), Category::Kernel);
        assert_eq!(Category::from_trace_name("Memcpy"), Category::GpuMemcpy);
        assert_eq!(Category::from_trace_name("Memset"), Category::GpuMemset);
        assert_eq!(Category::from_trace_name("async"), Category::FlowCpuToGpu);
        assert_eq!(
            Category::from_trace_name("cpu_instant_event"),
            Category::Unknown
        );
    }

    #[test]
    fn microseconds_convert_exactly_to_nanoseconds() {
        assert_eq!(
            micros_text_to_nanos("1419247333430.849"),
            Some(1419247333430849)
        );
        assert_eq!(
            micros_text_to_nanos("4458676522690.655"),
            Some(4458676522690655)
        );
        assert_eq!(
            micros_text_to_nanos("1695835572943613"),
            Some(1695835572943613000)
        );
        assert_eq!(micros_text_to_nanos("2.24"), Some(2240));
        assert_eq!(micros_text_to_nanos("0.0005"), Some(1));
        assert_eq!(micros_text_to_nanos("-1.5"), Some(-1500));
        assert_eq!(micros_text_to_nanos("2.5e3"), Some(2_500_000));
        assert_eq!(micros_text_to_nanos("\"12\""), None);
        assert_eq!(micros_text_to_nanos("null"), None);
        assert_eq!(micros_text_to_nanos("1e400"), None);
        assert_eq!(micros_text_to_nanos("9223372036854775807"), None);
    }
}
