//! Canonical dtype names for the element types the profiler records.
//!
//! `Input type` holds C++ TypeMeta names (`float`, `c10::BFloat16`, `long int`...), which
//! vary by compiler and era; GEMM parameters use PyTorch's own names (`bfloat16`...), the
//! names a replay harness passes back to libtorch or maps to cuBLAS data types.

/// PyTorch dtype name for a recorded TypeMeta name; an unknown name is returned as is.
pub fn canonical_dtype(type_meta: &str) -> String {
    let name = match type_meta {
        "float" => "float32",
        "double" => "float64",
        "c10::Half" => "float16",
        "c10::BFloat16" => "bfloat16",
        "c10::Float8_e4m3fn" => "float8_e4m3fn",
        "c10::Float8_e5m2" => "float8_e5m2",
        "c10::Float8_e4m3fnuz" => "float8_e4m3fnuz",
        "c10::Float8_e5m2fnuz" => "float8_e5m2fnuz",
        "signed char" => "int8",
        "unsigned char" => "uint8",
        "short" | "short int" => "int16",
        "int" => "int32",
        "long" | "long int" | "long long" | "long long int" => "int64",
        "bool" => "bool",
        "c10::complex<c10::Half>" => "complex32",
        "c10::complex<float>" => "complex64",
        "c10::complex<double>" => "complex128",
        other => other,
    };
    name.to_owned()
}

/// PyTorch dtype name for a `c10::ScalarType` number, as `Concrete Inputs` records an
/// `out_dtype` argument (e.g. `"15"` for bfloat16).
pub fn dtype_from_scalar_type(number: i64) -> Option<&'static str> {
    Some(match number {
        0 => "uint8",
        1 => "int8",
        2 => "int16",
        3 => "int32",
        4 => "int64",
        5 => "float16",
        6 => "float32",
        7 => "float64",
        8 => "complex32",
        9 => "complex64",
        10 => "complex128",
        11 => "bool",
        15 => "bfloat16",
        23 => "float8_e5m2",
        24 => "float8_e4m3fn",
        25 => "float8_e5m2fnuz",
        26 => "float8_e4m3fnuz",
        _ => return None,
    })
}

/// An element type as libtorch knows it, read from the profiler's TypeMeta names. The one
/// table between the recorded names and the replay: the libtorch side maps each to its
/// `tch::Kind` (`replay::torch::dtype`), classification names them with [`Dtype::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    Float32,
    Float64,
    Float16,
    BFloat16,
    Int64,
    Int32,
    Int16,
    Int8,
    UInt8,
    Bool,
    Complex32,
    Complex64,
    Complex128,
    Float8E4m3fn,
    Float8E5m2,
    Float8E4m3fnuz,
    Float8E5m2fnuz,
}

impl Dtype {
    /// Every dtype, for tables that must cover them all.
    pub const ALL: [Dtype; 17] = [
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Float16,
        Dtype::BFloat16,
        Dtype::Int64,
        Dtype::Int32,
        Dtype::Int16,
        Dtype::Int8,
        Dtype::UInt8,
        Dtype::Bool,
        Dtype::Complex32,
        Dtype::Complex64,
        Dtype::Complex128,
        Dtype::Float8E4m3fn,
        Dtype::Float8E5m2,
        Dtype::Float8E4m3fnuz,
        Dtype::Float8E5m2fnuz,
    ];

    /// The dtype of a recorded TypeMeta name (`float`, `c10::BFloat16`, `long int`...).
    pub fn from_recorded(type_meta: &str) -> Option<Dtype> {
        Dtype::from_name(&canonical_dtype(type_meta))
    }

    /// The dtype of a PyTorch name (`float32`, `bfloat16`...).
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// PyTorch's name of the dtype.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Float16 => "float16",
            Dtype::BFloat16 => "bfloat16",
            Dtype::Int64 => "int64",
            Dtype::Int32 => "int32",
            Dtype::Int16 => "int16",
            Dtype::Int8 => "int8",
            Dtype::UInt8 => "uint8",
            Dtype::Bool => "bool",
            Dtype::Complex32 => "complex32",
            Dtype::Complex64 => "complex64",
            Dtype::Complex128 => "complex128",
            Dtype::Float8E4m3fn => "float8_e4m3fn",
            Dtype::Float8E5m2 => "float8_e5m2",
            Dtype::Float8E4m3fnuz => "float8_e4m3fnuz",
            Dtype::Float8E5m2fnuz => "float8_e5m2fnuz",
        }
    }

    /// Integer types, bool excluded.
    pub fn is_integral(self) -> bool {
        matches!(
            self,
            Dtype::Int64 | Dtype::Int32 | Dtype::Int16 | Dtype::Int8 | Dtype::UInt8
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_meta_names_become_pytorch_dtypes() {
        assert_eq!(canonical_dtype("c10::BFloat16"), "bfloat16");
        assert_eq!(canonical_dtype("float"), "float32");
        assert_eq!(canonical_dtype("long int"), "int64");
        assert_eq!(canonical_dtype("Scalar"), "Scalar");
        assert_eq!(dtype_from_scalar_type(15), Some("bfloat16"));
        assert_eq!(dtype_from_scalar_type(99), None);
    }

    #[test]
    fn every_dtype_round_trips_through_its_name_and_the_recorded_names() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_name(d.name()), Some(d));
        }
        assert_eq!(Dtype::from_recorded("long long"), Some(Dtype::Int64));
        assert_eq!(
            Dtype::from_recorded("c10::complex<c10::Half>"),
            Some(Dtype::Complex32)
        );
        assert_eq!(Dtype::from_recorded("Scalar"), None);
        // Every ScalarType code the files can hold names a dtype of the table.
        for code in 0..40 {
            if let Some(name) = dtype_from_scalar_type(code) {
                assert!(Dtype::from_name(name).is_some(), "{name}");
            }
        }
    }
}
