//! What content a node holds, one manifest per root it added or fetched: what the "Stored here"
//! list shows, and what a restarted node knows it has. Each backend keeps manifests as opaque
//! records beside its blocks ([`super::Records`]); this module gives them their form.

use cid::Cid;
use serde::{Deserialize, Serialize};

use super::{Corruption, StoreError};
use syncscope_proto::swarm::Address;

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
    /// The root of the file's Swarm chunk tree, for a file added here (a fetched one came over
    /// Bitswap alone). Manifests written before it was kept have none.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "address_text")]
    pub swarm_root: Option<Address>,
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

mod address_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use syncscope_proto::swarm::Address;

    pub fn serialize<S: Serializer>(address: &Option<Address>, s: S) -> Result<S::Ok, S::Error> {
        match address {
            Some(address) => s.serialize_str(&address.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Address>, D::Error> {
        // Hex needs no escapes, so the text borrows from the record.
        let text = Option::<&str>::deserialize(d)?;
        text.map(|t| t.parse().map_err(serde::de::Error::custom)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_written_before_swarm_roots_were_kept_reads_without_one() {
        let old = br#"{"root":"bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy","name":"a","size":1,"since_ms":2,"complete":true}"#;
        let manifest = Manifest::decode(old).unwrap();
        assert_eq!(manifest.swarm_root, None);
        let added = Manifest { swarm_root: Some(Address([0x3c; 32])), ..manifest };
        assert_eq!(Manifest::decode(&added.encode()).unwrap(), added);
        let bad = br#"{"root":"bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy","name":"a","size":1,"since_ms":2,"complete":true,"swarm_root":"zz"}"#;
        assert!(Manifest::decode(bad).is_err());
    }
}
