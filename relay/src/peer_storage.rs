//! Where a native peer keeps what outlives its process: its identity key and its blocks, in one
//! data directory. A peer without one keeps everything in memory.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use libp2p::identity::Keypair;
use syncscope_node::store::{NodeBlockStore, PersistentBlockStore};

use crate::identity;

const BLOCKS_FILE: &str = "blocks.redb";

pub struct PeerStorage {
    pub keypair: Keypair,
    pub blocks: NodeBlockStore,
    /// The data directory; `None` in memory.
    pub dir: Option<PathBuf>,
}

impl PeerStorage {
    /// A fresh identity and no blocks, gone when the process ends.
    pub fn in_memory() -> Self {
        Self { keypair: Keypair::generate_ed25519(), blocks: NodeBlockStore::default(), dir: None }
    }

    /// Opens (or creates) the peer's data in `dir`. With `rebuild`, a block database that cannot
    /// be opened is moved aside and replaced by an empty one, rather than stopping the peer.
    pub fn open(dir: &Path, rebuild: bool) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create data directory {}", dir.display()))?;
        let keypair = identity::keypair(dir)?;
        let path = dir.join(BLOCKS_FILE);
        let store = match PersistentBlockStore::open(&path) {
            Ok(store) => store,
            Err(error) if rebuild => {
                let aside = move_aside(&path)?;
                tracing::warn!(%error, aside = %aside.display(), "block store unusable; moved it aside and started an empty one");
                PersistentBlockStore::open(&path).with_context(|| {
                    format!("cannot create a new block store {}", path.display())
                })?
            }
            Err(error) => anyhow::bail!(
                "cannot open the block store {}: {error}. If another peer is using this data \
                 directory, give this one its own; if the file is damaged, start with \
                 --rebuild-store to move it aside and begin with an empty store",
                path.display()
            ),
        };
        let blocks = NodeBlockStore::Persistent(store);
        Ok(Self { keypair, blocks, dir: Some(dir.to_owned()) })
    }
}

/// Renames the damaged file to `<name>.corrupt` (numbered if that exists), so that nothing is
/// deleted on the user's behalf.
fn move_aside(path: &Path) -> Result<PathBuf> {
    let aside = (0..)
        .map(|n| match n {
            0 => path.with_extension("redb.corrupt"),
            n => path.with_extension(format!("redb.corrupt.{n}")),
        })
        .find(|candidate| !candidate.exists())
        .context("no free name to move the damaged store to")?;
    std::fs::rename(path, &aside)
        .with_context(|| format!("cannot move {} aside", path.display()))?;
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("syncscope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_damaged_store_is_a_clear_error_and_rebuild_moves_it_aside() {
        let dir = temp_dir("damaged-store");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(BLOCKS_FILE), vec![0x5a; 4096]).unwrap();
        let error = PeerStorage::open(&dir, false).err().unwrap().to_string();
        assert!(error.contains("blocks.redb") && error.contains("--rebuild-store"), "{error}");
        let first_id = identity::keypair(&dir).unwrap().public().to_peer_id();

        let rebuilt = PeerStorage::open(&dir, true).unwrap();
        assert_eq!(rebuilt.keypair.public().to_peer_id(), first_id);
        assert_eq!(std::fs::read(dir.join("blocks.redb.corrupt")).unwrap(), vec![0x5a; 4096]);
        drop(rebuilt);
        PeerStorage::open(&dir, false).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
