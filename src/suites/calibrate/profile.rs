//! The calibration profile. Its types live in the torch-free core
//! (`replay_core::results::calibration`), so that `replay predict` reads profiles without
//! libtorch; they are re-exported here for the suite.

pub use replay_core::results::calibration::*;
