//! What content a node holds, one manifest per root it added or fetched: what the "Stored here"
//! list shows, and what a restarted node knows it has. Each backend keeps manifests as opaque
//! records beside its blocks ([`super::Records`]); this module gives them their form.

use cid::Cid;
use serde::{Deserialize, Serialize};

use super::{Corruption, StoreError};

/// One root the node holds, whole or in part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(with = "cid_text")]
    pub root: Cid,
    /// The file's name where it has one (a shared file), else empty.
    pub name: String,
    /// The file's size; 0 until a fetch knows it.
    pub size: u64,
    /// When it was added or first fetched, in milliseconds since the Unix epoch.
    pub since_ms: u64,
    /// Every block of the file is stored. A manifest is marked complete only once they are.
    pub complete: bool,
}

impl Manifest {
    pub(super) fn key(root: &Cid) -> Vec<u8> {
        root.to_bytes()
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub(super) fn decode(record: &[u8]) -> Result<Self, StoreError> {
        serde_json::from_slice(record).map_err(|_| StoreError::Corrupt(Corruption::NotAManifest))
    }
}

mod cid_text {
    use cid::Cid;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(cid: &Cid, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&cid.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Cid, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
