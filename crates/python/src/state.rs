//! A loaded trace and what the frames derive from it, each computed once on first use: the
//! links of its GPU activities to launches and ops, and its classification (the signature
//! file `replay classify` writes).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use replay_core::signature::{self, SignatureFile, SignatureIds};
use replay_core::trace::link::{self, Links};
use replay_core::trace::{self, Trace};

/// A trace as loaded, shared with the threads that work on it.
pub struct TraceState {
    /// The path as given (messages and the signature file name it).
    pub path: PathBuf,
    pub trace: Trace,
    links: Mutex<Option<Arc<Links>>>,
    classified: Mutex<Option<Arc<SignatureFile>>>,
    ids: Mutex<Option<Arc<SignatureIds>>>,
}

impl TraceState {
    /// Reads a plain or gzipped Kineto trace (`replay classify`'s reader).
    pub fn load(path: PathBuf) -> replay_core::Result<TraceState> {
        let trace = trace::load(&path)?;
        Ok(TraceState {
            path,
            trace,
            links: Mutex::new(None),
            classified: Mutex::new(None),
            ids: Mutex::new(None),
        })
    }

    /// Every GPU activity linked to its launch call and op ([`link::link`]).
    pub fn links(&self) -> Arc<Links> {
        let mut slot = self.links.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| Arc::new(link::link(&self.trace)))
            .clone()
    }

    /// The signature file of `replay classify` (with the Inductor cache beside the trace,
    /// when there is one, as the command finds it).
    pub fn classified(&self) -> replay_core::Result<Arc<SignatureFile>> {
        let mut slot = self.classified.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = &*slot {
            return Ok(file.clone());
        }
        let file = Arc::new(replay_core::inductor::classify_with_cache(
            &self.trace,
            &self.path,
            None,
        )?);
        *slot = Some(file.clone());
        Ok(file)
    }

    /// The signature id of each unit of work, by event.
    pub fn ids(&self) -> Arc<SignatureIds> {
        let links = self.links();
        let mut slot = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| Arc::new(signature::signature_ids(&self.trace, &links)))
            .clone()
    }
}
