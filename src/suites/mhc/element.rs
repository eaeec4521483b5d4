//! Borrowing a contiguous host tensor of one of the fused kernels' element types
//! ([`Element`], with the kernels in [`crate::kernels::mhc_sinkhorn`]) as a slice without
//! copying it.

use tch::Tensor;

use super::MhcError;
pub use crate::kernels::mhc_sinkhorn::Element;

fn check_host_tensor<T: Element>(t: &Tensor, what: &str) -> Result<(), MhcError> {
    if t.device() != crate::device::Device::host().torch() {
        return Err(MhcError::InvalidInput(format!(
            "{what} is on {:?}; the fused CPU kernels read host memory",
            t.device()
        )));
    }
    if t.kind() != T::KIND {
        return Err(MhcError::InvalidInput(format!(
            "{what} is {:?}, the kernel was instantiated for {:?}",
            t.kind(),
            T::KIND
        )));
    }
    if !t.is_contiguous() {
        return Err(MhcError::InvalidInput(format!("{what} is not contiguous")));
    }
    Ok(())
}

/// `t`'s elements as a slice: a contiguous host tensor of kind `T::KIND`, checked.
pub fn host_slice<'t, T: Element>(t: &'t Tensor, what: &str) -> Result<&'t [T], MhcError> {
    check_host_tensor::<T>(t, what)?;
    let len = t.numel();
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: a contiguous CPU tensor of this element type holds `numel` elements from its
    // data pointer on; the borrow of `t` keeps the storage alive.
    Ok(unsafe { std::slice::from_raw_parts(t.data_ptr() as *const T, len) })
}

/// `t`'s elements as a mutable slice (the `&mut` borrow is the only way to reach it here).
pub fn host_slice_mut<'t, T: Element>(
    t: &'t mut Tensor,
    what: &str,
) -> Result<&'t mut [T], MhcError> {
    check_host_tensor::<T>(t, what)?;
    let len = t.numel();
    if len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: as above; the tensor is borrowed mutably for the slice's life. A tensor that
    // shares its storage with another (a view) would alias: the suite only passes tensors it
    // allocated itself as outputs.
    Ok(unsafe { std::slice::from_raw_parts_mut(t.data_ptr() as *mut T, len) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;
    use tch::Kind;

    #[test]
    fn tensors_are_read_as_slices_of_their_own_type_only() {
        let t = Tensor::from_slice(&[1.0f32, 2.5, -3.0]).to_kind(Kind::BFloat16);
        let s = host_slice::<bf16>(&t, "t").unwrap();
        let mut f = [0.0f32; 3];
        bf16::to_f32_slice(s, &mut f);
        assert_eq!(f, [1.0, 2.5, -3.0]);
        assert!(host_slice::<f32>(&t, "t").is_err());
        let strided = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0])
            .view([2, 2])
            .transpose(0, 1);
        assert!(host_slice::<f32>(&strided, "x")
            .unwrap_err()
            .to_string()
            .contains("contiguous"));
    }
}
