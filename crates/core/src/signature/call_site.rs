//! Where a recorded op call was made: eager code and TorchScript call ops functionally (or in
//! place), while Inductor's output code calls its extern kernels with `out=`
//! (`extern_kernels.mm(a, b, out=buf)`), which the profiler records as a trailing input. The
//! overload rule ([`super::overload::choose`]) reads the recorded inputs by it.

use super::compiled_code::is_compiled_region;

/// Where a recorded call was made, which decides whether an `out=` overload may be it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallSite {
    /// Eager code or TorchScript: calls are functional (or in place); an extra recorded
    /// input is one TorchScript left on its stack, before the arguments.
    #[default]
    Eager,
    /// Inside a torch.compile region (Inductor's output code), whose extern kernel calls pass
    /// their output buffer as `out=`.
    Compiled,
}

impl CallSite {
    /// The site of an op whose enclosing spans are `ancestry` (outermost first): compiled
    /// when any of them is a compiled region (`Torch-Compiled Region: 0/0`,
    /// `CompiledFunction`, `CompiledFunctionBackward`).
    pub fn of_ancestry<S: AsRef<str>>(ancestry: &[S]) -> CallSite {
        if ancestry
            .iter()
            .any(|name| is_compiled_region(name.as_ref()))
        {
            CallSite::Compiled
        } else {
            CallSite::Eager
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiled_region_anywhere_around_the_op_makes_it_compiled() {
        assert_eq!(
            CallSite::of_ancestry(&["Torch-Compiled Region: 0/0"]),
            CallSite::Compiled
        );
        assert_eq!(
            CallSite::of_ancestry(&["ProfilerStep#3", "CompiledFunction", "aten::linear"]),
            CallSite::Compiled
        );
        assert_eq!(
            CallSite::of_ancestry(&["forward", "aten::linear"]),
            CallSite::Eager
        );
        assert_eq!(CallSite::of_ancestry::<&str>(&[]), CallSite::Eager);
    }
}
