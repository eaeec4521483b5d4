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
}
