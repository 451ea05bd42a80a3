//! Deterministic demo content, so that seed peers hold the same file after every restart and the
//! share links that name it stay valid.
//!
//! The bytes of `demo_content(seed, size)` are the ChaCha20 keystream (zero nonce, counter from 0)
//! under the key `sha256(seed as a decimal string)`. That is the generator of kubo's test helper
//! `DeterministicRandomReaderBytes(size, "<seed>")` (kubo
//! `test/cli/testutils/random_deterministic.go`), which the CID tests of kubo and of Helia's
//! importer use: anyone can rebuild the content elsewhere, and the same code is checked here
//! against those tests' published CIDs. ChaCha20 is specified to the bit, and rand_chacha produces
//! it the same on every platform; `tests/content_wasm.rs` checks wasm32 in a browser.

use super::swarm_split::{SplitFile, SwarmSplitter};
use super::unixfs_import::{ImportConfig, ImportedFile, UnixfsImporter};
use bytes::Bytes;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};
use syncscope_proto::swarm::{Stamp, STAMP_SIZE};

/// Bytes generated and imported at a time by [`import_demo`].
const PIECE: usize = 64 * 1024;

/// A stream of `size` deterministic bytes. Read it with [`fill`](Self::fill) or collect it with
/// [`into_vec`](Self::into_vec).
#[derive(Clone, Debug)]
pub struct DemoContent {
    rng: ChaCha20Rng,
    /// The rest of a keystream word split by the previous read: rand_chacha hands out whole
    /// 32-bit words, and drops what a read leaves of one.
    carry: [u8; 4],
    carry_at: usize,
    remaining: usize,
}

/// The demo content for `seed`, `size` bytes long.
pub fn demo_content(seed: u64, size: usize) -> DemoContent {
    DemoContent::from_label(&seed.to_string(), size)
}

impl DemoContent {
    /// kubo's deterministic stream for any string seed (`demo_content` uses the decimal seed).
    pub fn from_label(label: &str, size: usize) -> Self {
        Self::from_key(Sha256::digest(label.as_bytes()).into(), size)
    }

    fn from_key(key: [u8; 32], size: usize) -> Self {
        let rng = ChaCha20Rng::from_seed(key);
        DemoContent { rng, carry: [0; 4], carry_at: 4, remaining: size }
    }

    /// Bytes still to come.
    pub fn remaining(&self) -> usize {
        self.remaining
    }

    /// Writes the next bytes into `out` and returns how many: `out.len()` until the end.
    pub fn fill(&mut self, out: &mut [u8]) -> usize {
        let len = out.len().min(self.remaining);
        let out = &mut out[..len];
        let mut done = self.take_carry(out);
        let whole_words = (len - done) / 4 * 4;
        self.rng.fill_bytes(&mut out[done..done + whole_words]);
        done += whole_words;
        if done < len {
            self.rng.fill_bytes(&mut self.carry);
            self.carry_at = 0;
            done += self.take_carry(&mut out[done..]);
        }
        self.remaining -= len;
        done
    }

    pub fn into_vec(mut self) -> Vec<u8> {
        let mut bytes = vec![0; self.remaining];
        self.fill(&mut bytes);
        bytes
    }

    fn take_carry(&mut self, out: &mut [u8]) -> usize {
        let n = (4 - self.carry_at).min(out.len());
        out[..n].copy_from_slice(&self.carry[self.carry_at..self.carry_at + n]);
        self.carry_at += n;
        n
    }
}

/// The postage stamp a seed peer's demo chunks carry. syncscope carries stamps opaquely, so it
/// only has to be well-formed and the same on every restart: the batch ID is
/// `sha256("syncscope demo batch" || seed)` and the rest is zero.
pub fn demo_stamp(seed: u64) -> Stamp {
    let batch =
        Sha256::new().chain_update(b"syncscope demo batch").chain_update(seed.to_le_bytes());
    let mut stamp = vec![0; STAMP_SIZE];
    stamp[..32].copy_from_slice(&batch.finalize());
    Stamp::new(Bytes::from(stamp)).expect("STAMP_SIZE bytes make a stamp")
}

/// The demo file imported both ways: UnixFS blocks (kubo's `--cid-version=1 --raw-leaves`
/// layout) and Swarm chunks stamped with [`demo_stamp`].
#[derive(Clone, Debug)]
pub struct DemoFile {
    pub unixfs: ImportedFile,
    pub swarm: SplitFile,
}

/// Generates the demo content for `seed` and imports it both ways, a piece at a time: only the
/// resulting blocks and chunks are held, not a copy of the file.
pub fn import_demo(seed: u64, size: usize) -> DemoFile {
    let mut content = demo_content(seed, size);
    let mut unixfs = UnixfsImporter::new(ImportConfig::default())
        .expect("the default import configuration is valid");
    let mut swarm = SwarmSplitter::new(demo_stamp(seed));
    let mut piece = vec![0; PIECE];
    while content.remaining() > 0 {
        let len = content.fill(&mut piece);
        unixfs.write(&piece[..len]);
        swarm.write(&piece[..len]);
    }
    DemoFile { unixfs: unixfs.finish(), swarm: swarm.finish() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{export_file, import_bytes, join_file, split_bytes, ExportLimits};
    use std::collections::HashMap;
    use syncscope_proto::test_utils::hex;

    // RFC 8439 appendix A.1, test vector #1: the ChaCha20 block of the all-zero key and nonce,
    // block counter 0. Read in uneven pieces to cross word boundaries.
    #[test]
    fn keystream_is_chacha20() {
        let mut stream = DemoContent::from_key([0; 32], 64);
        let mut out = vec![0; 64];
        let mut at = 0;
        for piece in [1, 2, 3, 5, 7, 11, 13, 22] {
            assert_eq!(stream.fill(&mut out[at..at + piece]), piece);
            at += piece;
        }
        assert_eq!(stream.remaining(), 0);
        assert_eq!(stream.fill(&mut [0; 8]), 0);
        assert_eq!(
            out,
            hex::decode(
                "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7\
                 da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
            )
        );
    }

    #[test]
    fn same_seed_same_bytes_in_any_pieces() {
        let whole = demo_content(42, 10_000).into_vec();
        assert_eq!(whole.len(), 10_000);
        let mut pieces = demo_content(42, 10_000);
        let mut joined = Vec::new();
        let mut buf = [0; 333];
        while pieces.remaining() > 0 {
            let n = pieces.fill(&mut buf);
            joined.extend_from_slice(&buf[..n]);
        }
        assert_eq!(joined, whole);
        assert_ne!(demo_content(43, 10_000).into_vec(), whole);
        // A shorter file is a prefix of a longer one with the same seed.
        assert_eq!(demo_content(42, 100).into_vec(), whole[..100]);
    }

    #[test]
    fn demo_stamps_differ_by_seed_and_not_by_run() {
        assert_eq!(demo_stamp(1), demo_stamp(1));
        assert_ne!(demo_stamp(1).batch_id(), demo_stamp(2).batch_id());
    }

    #[test]
    fn import_demo_matches_one_shot_imports_and_exports_back() {
        let size = 3 * 256 * 1024 + 12_345;
        let content = demo_content(7, size).into_vec();
        let demo = import_demo(7, size);
        let unixfs = import_bytes(&content, ImportConfig::default()).unwrap();
        assert_eq!(demo.unixfs, unixfs);
        let swarm = split_bytes(&content, demo_stamp(7));
        assert_eq!(demo.swarm, swarm);

        let blocks: HashMap<_, _> =
            demo.unixfs.blocks.iter().map(|b| (b.cid(), b.data().clone())).collect();
        let exported =
            export_file(demo.unixfs.root, ExportLimits::default(), |cid| blocks.get(cid).cloned());
        assert_eq!(exported.unwrap(), content);
        let chunks: HashMap<_, _> =
            demo.swarm.chunks.iter().map(|c| (c.address(), c.data().clone())).collect();
        let joined = join_file(demo.swarm.root, size as u64, |a| chunks.get(a).cloned());
        assert_eq!(joined.unwrap(), content);
    }
}
