//! The core's test helpers (one file, shared), and the built `replay`.
#![allow(dead_code)]

#[path = "../../../core/tests/torch_free/common.rs"]
mod shared;

pub use shared::*;

/// The built `replay` binary, with a clean environment for the things that change its output.
pub fn replay() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_replay"));
    cmd.env_remove("NVCC");
    cmd
}
