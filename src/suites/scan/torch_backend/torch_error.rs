//! libtorch's errors as scan errors: memory it could not get is a row's `oom`, anything else
//! its `error`.

use super::super::ScanError;

/// The seed classifies by "out of memory" in the message (the CUDA caching allocator's
/// wording). libtorch's CPU allocator says "not enough memory" instead; it is the same
/// condition, so it counts as out of memory too.
pub fn scan_error(error: tch::TchError) -> ScanError {
    let text = error.to_string();
    // The first line says what went wrong; the rest is libtorch's C++ backtrace.
    let head = text.lines().next().unwrap_or(&text).trim().to_string();
    let lower = text.to_ascii_lowercase();
    if lower.contains("out of memory") || lower.contains("not enough memory") {
        ScanError::OutOfMemory(head)
    } else {
        ScanError::Backend(format!("libtorch: {head}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_is_told_apart_from_other_failures() {
        let cuda =
            tch::TchError::Torch("CUDA out of memory. Tried to allocate 2.00 GiB\nbt".into());
        assert!(matches!(scan_error(cuda), ScanError::OutOfMemory(m) if !m.contains("bt")));
        let cpu = tch::TchError::Torch(
            "DefaultCPUAllocator: not enough memory: you tried to allocate 8 bytes".into(),
        );
        assert!(matches!(scan_error(cpu), ScanError::OutOfMemory(_)));
        let other = tch::TchError::Torch("index 9 is out of bounds".into());
        assert!(matches!(scan_error(other), ScanError::Backend(_)));
    }

    #[test]
    fn a_real_libtorch_failure_is_a_backend_error() {
        let a = tch::Tensor::zeros(
            [2, 3],
            (tch::Kind::Float, crate::device::Device::host().torch()),
        );
        let b = tch::Tensor::zeros(
            [4],
            (tch::Kind::Float, crate::device::Device::host().torch()),
        );
        let error = a
            .f_add(&b)
            .expect_err("shapes [2, 3] and [4] do not broadcast");
        assert!(matches!(scan_error(error), ScanError::Backend(_)));
    }
}
