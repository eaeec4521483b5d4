//! libtorch's intra-op thread count, set once per process before anything runs.

/// Sets libtorch's intra-op threads; `None` keeps libtorch's own choice.
pub fn apply(threads: Option<i32>) -> crate::Result<()> {
    if let Some(n) = threads {
        if n < 1 {
            return Err(crate::Error::from(replay_core::Error::BadInput {
                path: "--threads".into(),
                message: "must be at least 1".into(),
            }));
        }
        tch::set_num_threads(n);
    }
    Ok(())
}
