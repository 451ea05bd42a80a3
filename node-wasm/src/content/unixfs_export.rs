//! UnixFS file export: walks a file's DAG depth-first in link order and yields its bytes.
//!
//! [`UnixfsExporter`] is sans-IO: it names the next block it needs ([`want`](UnixfsExporter::want))
//! and takes that block's bytes ([`provide`](UnixfsExporter::provide)). Every block is hashed
//! against its CID and every node's sizes are checked against its parent's `blocksizes`, so the
//! bytes that come out are exactly the file the root names, of exactly the size it declares. A bad
//! block is refused with the exporter unchanged, so the caller can fetch it again elsewhere.

use super::block::{link_cid, verify_block, BlockError, DAG_PB, RAW};
use super::dag_pb::{DataType, PbNode, UnixfsData};
use bytes::Bytes;
use cid::Cid;
use prost::Message;
use thiserror::Error;

/// Bounds on what a root may make the exporter do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportLimits {
    /// Largest file size a root may declare. A DAG can repeat a block under many links, so a
    /// small DAG can declare a huge file: this is what stops it.
    pub max_file_size: u64,
    /// Deepest node, the root being at depth 1.
    pub max_depth: usize,
}

impl Default for ExportLimits {
    fn default() -> Self {
        // 1 TiB; 32 levels of even 2 links each hold far more chunks than that.
        ExportLimits { max_file_size: 1 << 40, max_depth: 32 }
    }
}

impl ExportLimits {
    pub fn with_max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self
    }

    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportError {
    #[error(transparent)]
    Block(#[from] BlockError),
    #[error("dag-pb node without UnixFS data")]
    MissingUnixfsData,
    #[error("UnixFS data does not decode: {0}")]
    Unixfs(prost::DecodeError),
    #[error("UnixFS node of type {0} is not part of a file")]
    NotAFile(i32),
    #[error("node has {links} links but {blocksizes} blocksizes")]
    BlocksizeCount { links: usize, blocksizes: usize },
    #[error(
        "node declares a filesize of {declared} bytes but its data and blocksizes add to {actual}"
    )]
    FilesizeMismatch { declared: u64, actual: u64 },
    #[error("node sizes overflow 64 bits")]
    SizeOverflow,
    #[error("block holds {actual} file bytes where its parent says {expected}")]
    SizeMismatch { expected: u64, actual: u64 },
    #[error("file of {size} bytes is over the {limit}-byte limit")]
    TooLarge { size: u64, limit: u64 },
    #[error("DAG is deeper than {0} levels")]
    TooDeep(usize),
    #[error("no block is wanted: the file is complete")]
    NothingWanted,
    #[error("block {0} is not available")]
    Missing(Cid),
}

/// A block the walk still needs, with the file size its parent says it holds (none for the root).
#[derive(Clone, Copy, Debug)]
struct Wanted {
    cid: Cid,
    size: Option<u64>,
}

/// The children of one node, and the next one to fetch.
#[derive(Debug)]
struct Frame {
    children: Vec<Wanted>,
    next: usize,
}

/// What one block contributes: its own file bytes, its total size and its children.
struct Node {
    data: Bytes,
    size: u64,
    children: Vec<Wanted>,
}

/// Sans-IO exporter of one UnixFS file. Call [`want`](Self::want), fetch that block, pass it to
/// [`provide`](Self::provide), append what it returns to the output, and repeat until `want` is
/// `None`. Memory is one frame of links per level of the DAG.
#[derive(Debug)]
pub struct UnixfsExporter {
    limits: ExportLimits,
    /// Innermost node last. Frames whose children were all fetched are popped, except ones
    /// below a frame still in progress (they count for the depth).
    stack: Vec<Frame>,
    file_size: Option<u64>,
}

impl UnixfsExporter {
    pub fn new(root: Cid, limits: ExportLimits) -> Self {
        let root = Frame { children: vec![Wanted { cid: root, size: None }], next: 0 };
        UnixfsExporter { limits, stack: vec![root], file_size: None }
    }

    /// The block needed next, or `None` when the whole file has been produced.
    pub fn want(&self) -> Option<&Cid> {
        self.stack.last().map(|frame| &frame.children[frame.next].cid)
    }

    /// The root's declared size, once the root has been provided.
    pub fn file_size(&self) -> Option<u64> {
        self.file_size
    }

    /// Takes the bytes of the wanted block and returns the file bytes it holds (empty for a
    /// parent without data). On error nothing changes and the same block is still wanted.
    pub fn provide(&mut self, block: Bytes) -> Result<Bytes, ExportError> {
        let wanted = self.wanted()?;
        verify_block(&wanted.cid, &block)?;
        self.provide_verified(block)
    }

    /// [`provide`](Self::provide) for a block already checked against its CID, e.g. read from a
    /// store that holds only verified blocks: everything but the hash is checked.
    pub fn provide_verified(&mut self, block: Bytes) -> Result<Bytes, ExportError> {
        let depth = self.stack.len();
        let wanted = self.wanted()?;
        let node = parse(&wanted.cid, block)?;
        match wanted.size {
            Some(expected) if expected != node.size => {
                return Err(ExportError::SizeMismatch { expected, actual: node.size });
            }
            None if node.size > self.limits.max_file_size => {
                let limit = self.limits.max_file_size;
                return Err(ExportError::TooLarge { size: node.size, limit });
            }
            _ => {}
        }
        if !node.children.is_empty() && depth >= self.limits.max_depth {
            return Err(ExportError::TooDeep(self.limits.max_depth));
        }

        if wanted.size.is_none() {
            self.file_size = Some(node.size);
        }
        if let Some(frame) = self.stack.last_mut() {
            frame.next += 1;
        }
        if !node.children.is_empty() {
            self.stack.push(Frame { children: node.children, next: 0 });
        }
        while self.stack.last().is_some_and(|frame| frame.next == frame.children.len()) {
            self.stack.pop();
        }
        Ok(node.data)
    }

    fn wanted(&self) -> Result<Wanted, ExportError> {
        let frame = self.stack.last().ok_or(ExportError::NothingWanted)?;
        Ok(frame.children[frame.next])
    }
}

/// Walks a whole file in a store of verified blocks without assembling it: checks that every
/// block is there and that every size adds up, and returns the file's size. Costs no hashing
/// and no copy of the file, so a fetch can confirm it is complete in a moment.
pub fn check_stored_file(
    root: Cid,
    limits: ExportLimits,
    mut get: impl FnMut(&Cid) -> Option<Bytes>,
) -> Result<u64, ExportError> {
    let mut exporter = UnixfsExporter::new(root, limits);
    let mut size = 0u64;
    while let Some(&cid) = exporter.want() {
        let block = get(&cid).ok_or(ExportError::Missing(cid))?;
        size += exporter.provide_verified(block)?.len() as u64;
    }
    Ok(size)
}

/// Exports a whole file from a block getter (a store, or blocks already fetched).
pub fn export_file(
    root: Cid,
    limits: ExportLimits,
    mut get: impl FnMut(&Cid) -> Option<Bytes>,
) -> Result<Vec<u8>, ExportError> {
    let mut exporter = UnixfsExporter::new(root, limits);
    let mut file = Vec::new();
    while let Some(&cid) = exporter.want() {
        let block = get(&cid).ok_or(ExportError::Missing(cid))?;
        file.extend_from_slice(&exporter.provide(block)?);
    }
    Ok(file)
}

fn parse(cid: &Cid, block: Bytes) -> Result<Node, ExportError> {
    match cid.codec() {
        RAW => Ok(Node { size: block.len() as u64, data: block, children: Vec::new() }),
        DAG_PB => parse_dag_pb(block),
        codec => Err(BlockError::UnsupportedCodec(codec).into()),
    }
}

fn parse_dag_pb(block: Bytes) -> Result<Node, ExportError> {
    let node = PbNode::decode(block).map_err(BlockError::from)?;
    let unixfs = node.data.ok_or(ExportError::MissingUnixfsData)?;
    let unixfs = UnixfsData::decode(unixfs).map_err(ExportError::Unixfs)?;
    // Raw is what trickle-DAG and old importers gave leaves; both carry file bytes.
    match DataType::try_from(unixfs.r#type) {
        Ok(DataType::File | DataType::Raw) => {}
        _ => return Err(ExportError::NotAFile(unixfs.r#type)),
    }
    if unixfs.blocksizes.len() != node.links.len() {
        let (links, blocksizes) = (node.links.len(), unixfs.blocksizes.len());
        return Err(ExportError::BlocksizeCount { links, blocksizes });
    }
    let data = unixfs.data.unwrap_or_default();
    let size = unixfs
        .blocksizes
        .iter()
        .try_fold(data.len() as u64, |sum, &size| sum.checked_add(size))
        .ok_or(ExportError::SizeOverflow)?;
    if let Some(declared) = unixfs.filesize.filter(|&declared| declared != size) {
        return Err(ExportError::FilesizeMismatch { declared, actual: size });
    }
    let children = node
        .links
        .iter()
        .enumerate()
        .map(link_cid)
        .zip(unixfs.blocksizes)
        .map(|(cid, size)| Ok(Wanted { cid: cid?, size: Some(size) }))
        .collect::<Result<_, BlockError>>()?;
    Ok(Node { data, size, children })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::block::{block_links, Block};
    use crate::content::dag_pb::PbLink;
    use crate::content::demo::DemoContent;
    use crate::content::unixfs_import::{import_bytes, ImportConfig, ImportedFile, Leaves};
    use cid::Version;
    use rand::{Rng, SeedableRng};
    use std::collections::{HashMap, HashSet};

    type Store = HashMap<Cid, Bytes>;

    fn store(blocks: &[Block]) -> Store {
        blocks.iter().map(|b| (b.cid(), b.data().clone())).collect()
    }

    fn export(root: Cid, store: &Store, limits: ExportLimits) -> Result<Vec<u8>, ExportError> {
        export_file(root, limits, |cid| store.get(cid).cloned())
    }

    fn small_tree() -> ImportConfig {
        ImportConfig::default().with_chunk_size(4).with_max_links(3)
    }

    fn import(data: &[u8], config: ImportConfig) -> (ImportedFile, Store) {
        let file = import_bytes(data, config).unwrap();
        let store = store(&file.blocks);
        (file, store)
    }

    /// A dag-pb node with UnixFS data of `type`, linking `links`.
    fn node(
        r#type: DataType,
        data: Option<&'static [u8]>,
        filesize: Option<u64>,
        blocksizes: Vec<u64>,
        links: &[Cid],
    ) -> Block {
        let unixfs = UnixfsData {
            r#type: r#type as i32,
            data: data.map(Bytes::from_static),
            filesize,
            blocksizes,
        };
        let links = links
            .iter()
            .map(|cid| PbLink {
                hash: Some(cid.to_bytes()),
                name: Some(String::new()),
                tsize: None,
            })
            .collect();
        let node = PbNode { data: Some(unixfs.encode_to_vec().into()), links };
        Block::sha256(Version::V1, DAG_PB, node.encode_canonical().into())
    }

    fn raw(data: &'static [u8]) -> Block {
        Block::sha256(Version::V1, RAW, Bytes::from_static(data))
    }

    /// Exports `root` from `blocks`.
    fn export_blocks(root: &Block, blocks: &[&Block]) -> Result<Vec<u8>, ExportError> {
        let mut store: Store = blocks.iter().map(|b| (b.cid(), b.data().clone())).collect();
        store.insert(root.cid(), root.data().clone());
        export(root.cid(), &store, ExportLimits::default())
    }

    #[test]
    fn round_trips_files_of_every_shape() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 31 % 251) as u8).collect();
        let configs = [
            small_tree(),
            small_tree().with_leaves(Leaves::DagPb),
            small_tree().with_leaves(Leaves::DagPb).with_cid_version(Version::V0),
        ];
        for config in configs {
            for len in [0, 1, 3, 4, 5, 12, 13, 36, 37, 40, 108, 109, 300] {
                let (file, store) = import(&data[..len], config.clone());
                let out = export(file.root, &store, ExportLimits::default()).unwrap();
                assert_eq!(out, &data[..len], "{config:?}, {len} bytes");
            }
        }
        let content = DemoContent::from_label("export", 3 << 20).into_vec();
        let (file, store) = import(&content, ImportConfig::default());
        assert_eq!(export(file.root, &store, ExportLimits::default()).unwrap(), content);
    }

    #[test]
    fn want_and_provide_stream_the_file_in_order() {
        let data: Vec<u8> = (0..=99).collect();
        let (file, store) = import(&data, small_tree());
        let mut exporter = UnixfsExporter::new(file.root, ExportLimits::default());
        assert_eq!(exporter.file_size(), None);
        let mut out = Vec::new();
        let mut fetched = 0;
        while let Some(cid) = exporter.want().copied() {
            out.extend_from_slice(&exporter.provide(store[&cid].clone()).unwrap());
            assert_eq!(exporter.file_size(), Some(100));
            fetched += 1;
        }
        assert_eq!(out, data);
        assert_eq!(fetched, file.blocks.len());
        assert_eq!(exporter.provide(Bytes::new()), Err(ExportError::NothingWanted));
    }

    #[test]
    fn a_corrupt_block_is_refused_and_the_right_one_still_accepted() {
        let data: Vec<u8> = (0..=99).collect();
        let (file, store) = import(&data, small_tree());
        let mut exporter = UnixfsExporter::new(file.root, ExportLimits::default());
        let mut out = Vec::new();
        let mut corrupted = 0;
        while let Some(cid) = exporter.want().copied() {
            let good = store[&cid].clone();
            let mut bad = good.to_vec();
            bad[0] ^= 1;
            assert_eq!(
                exporter.provide(bad.into()),
                Err(ExportError::Block(BlockError::HashMismatch(cid)))
            );
            assert_eq!(exporter.want(), Some(&cid));
            corrupted += 1;
            out.extend_from_slice(&exporter.provide(good).unwrap());
        }
        assert_eq!(out, data);
        assert_eq!(corrupted, file.blocks.len());
    }

    #[test]
    fn a_missing_block_is_named() {
        let (file, mut store) = import(&[5; 20], small_tree());
        let leaf = file.blocks[0].cid();
        store.remove(&leaf);
        assert_eq!(
            export(file.root, &store, ExportLimits::default()),
            Err(ExportError::Missing(leaf))
        );
    }

    #[test]
    fn checking_a_stored_file_walks_sizes_and_presence_but_not_hashes() {
        let data: Vec<u8> = (0..50u8).collect();
        let (file, mut store) = import(&data, small_tree());
        let check = |store: &Store| {
            check_stored_file(file.root, ExportLimits::default(), |cid| store.get(cid).cloned())
        };
        assert_eq!(check(&store), Ok(50));
        // Sizes are still checked: a leaf of the wrong length under its CID is caught ...
        let leaf = file.blocks[0].cid();
        store.insert(leaf, Bytes::from_static(b"xyz"));
        assert_eq!(check(&store), Err(ExportError::SizeMismatch { expected: 4, actual: 3 }));
        // ... but not hashes, which the store vouches for: same length, other bytes pass.
        store.insert(leaf, Bytes::from_static(b"wxyz"));
        assert_eq!(check(&store), Ok(50));
        store.remove(&leaf);
        assert_eq!(check(&store), Err(ExportError::Missing(leaf)));
    }

    #[test]
    fn sizes_must_agree_between_parent_and_child() {
        let leaf = raw(b"abc");
        let wrong_blocksize = node(DataType::File, None, Some(4), vec![4], &[leaf.cid()]);
        assert_eq!(
            export_blocks(&wrong_blocksize, &[&leaf]),
            Err(ExportError::SizeMismatch { expected: 4, actual: 3 })
        );
        let wrong_count = node(DataType::File, None, Some(3), vec![3, 0], &[leaf.cid()]);
        assert_eq!(
            export_blocks(&wrong_count, &[&leaf]),
            Err(ExportError::BlocksizeCount { links: 1, blocksizes: 2 })
        );
        let wrong_filesize = node(DataType::File, Some(b"xy"), Some(4), vec![3], &[leaf.cid()]);
        assert_eq!(
            export_blocks(&wrong_filesize, &[&leaf]),
            Err(ExportError::FilesizeMismatch { declared: 4, actual: 5 })
        );
        let overflow =
            node(DataType::File, None, None, vec![u64::MAX, 3], &[leaf.cid(), leaf.cid()]);
        assert_eq!(export_blocks(&overflow, &[&leaf]), Err(ExportError::SizeOverflow));
        // Data in a parent comes before its children; a missing filesize is computed.
        let with_data = node(DataType::File, Some(b"xy"), None, vec![3], &[leaf.cid()]);
        assert_eq!(export_blocks(&with_data, &[&leaf]).unwrap(), b"xyabc");
    }

    #[test]
    fn only_file_nodes_are_exported() {
        let leaf = raw(b"abc");
        let directory = node(DataType::Directory, None, None, vec![3], &[leaf.cid()]);
        assert_eq!(export_blocks(&directory, &[&leaf]), Err(ExportError::NotAFile(1)));
        let legacy_raw = node(DataType::Raw, Some(b"old"), Some(3), vec![], &[]);
        assert_eq!(export_blocks(&legacy_raw, &[]).unwrap(), b"old");

        let no_unixfs = PbNode { data: None, links: vec![] };
        let no_unixfs = Block::sha256(Version::V1, DAG_PB, no_unixfs.encode_canonical().into());
        assert_eq!(export_blocks(&no_unixfs, &[]), Err(ExportError::MissingUnixfsData));

        let bad_unixfs = PbNode { data: Some(Bytes::from_static(&[0x08, 0xff])), links: vec![] };
        let bad_unixfs = Block::sha256(Version::V1, DAG_PB, bad_unixfs.encode_canonical().into());
        assert!(matches!(export_blocks(&bad_unixfs, &[]), Err(ExportError::Unixfs(_))));

        let bad_pb = Block::sha256(Version::V1, DAG_PB, Bytes::from_static(&[0x12, 0x05, 0x0a]));
        assert!(matches!(
            export_blocks(&bad_pb, &[]),
            Err(ExportError::Block(BlockError::DagPb(_)))
        ));

        let cbor = Block::verified(Cid::new_v1(0x71, *leaf.cid().hash()), leaf.data().clone())
            .expect("the same bytes under another codec");
        assert_eq!(
            export_blocks(&cbor, &[]),
            Err(ExportError::Block(BlockError::UnsupportedCodec(0x71)))
        );
    }

    #[test]
    fn a_link_that_is_not_a_cid_is_refused() {
        let unixfs = UnixfsData {
            r#type: DataType::File as i32,
            data: None,
            filesize: Some(1),
            blocksizes: vec![1],
        };
        let link = PbLink { hash: Some(vec![1, 2, 3]), name: None, tsize: None };
        let node = PbNode { data: Some(unixfs.encode_to_vec().into()), links: vec![link] };
        let root = Block::sha256(Version::V1, DAG_PB, node.encode_canonical().into());
        assert_eq!(export_blocks(&root, &[]), Err(ExportError::Block(BlockError::BadLink(0))));
    }

    #[test]
    fn limits_bound_size_and_depth() {
        // 37 bytes in 4-byte chunks, 3 links per node: 10 leaves, depth 4.
        let (file, store) = import(&[1; 37], small_tree());
        let tight = ExportLimits::default().with_max_file_size(36);
        assert_eq!(
            export(file.root, &store, tight),
            Err(ExportError::TooLarge { size: 37, limit: 36 })
        );
        let exact = ExportLimits::default().with_max_file_size(37);
        assert_eq!(export(file.root, &store, exact).unwrap().len(), 37);
        let shallow = ExportLimits::default().with_max_depth(3);
        assert_eq!(export(file.root, &store, shallow), Err(ExportError::TooDeep(3)));
        let deep_enough = ExportLimits::default().with_max_depth(4);
        assert_eq!(export(file.root, &store, deep_enough).unwrap().len(), 37);
    }

    #[test]
    fn a_small_dag_declaring_a_huge_file_is_refused_at_its_root() {
        // Each level links the one below 1000 times: four blocks declare a 3 GB file.
        let mut root = raw(b"abc");
        let mut size = 3;
        for _ in 0..3 {
            root = node(DataType::File, None, None, vec![size; 1000], &[root.cid(); 1000]);
            size *= 1000;
        }
        let limits = ExportLimits::default().with_max_file_size(1 << 30);
        let mut exporter = UnixfsExporter::new(root.cid(), limits);
        assert_eq!(
            exporter.provide(root.data().clone()),
            Err(ExportError::TooLarge { size: 3_000_000_000, limit: 1 << 30 })
        );
    }

    #[test]
    fn breadth_first_walk_with_block_links_reaches_every_block() {
        let (file, store) = import(&[9; 37], small_tree());
        let mut layer = vec![file.root];
        let mut seen = HashSet::new();
        let mut layers = 0;
        while !layer.is_empty() {
            layers += 1;
            let mut next = Vec::new();
            for cid in layer {
                let data = &store[&cid];
                verify_block(&cid, data).unwrap();
                seen.insert(cid);
                next.extend(block_links(&cid, data).unwrap());
            }
            layer = next;
        }
        assert_eq!(layers, 4);
        assert_eq!(seen, file.blocks.iter().map(|b| b.cid()).collect());
    }

    /// Random edits of real nodes, each stored under its new hash so that it gets past the hash
    /// check: the exporter must refuse or accept them without panicking, and whatever it accepts
    /// must add up to the size the root declares.
    #[test]
    fn mangled_nodes_never_panic() {
        let (file, mut store) = import(&(0..=255).collect::<Vec<u8>>(), small_tree());
        let nodes: Vec<Bytes> = file
            .blocks
            .iter()
            .filter(|b| b.cid().codec() == DAG_PB)
            .map(|b| b.data().clone())
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..3000 {
            let mut bytes = nodes[rng.random_range(0..nodes.len())].to_vec();
            for _ in 0..rng.random_range(1..4) {
                let at = rng.random_range(0..bytes.len());
                match rng.random_range(0..4) {
                    0 => bytes[at] ^= 1 << rng.random_range(0..8),
                    1 => bytes[at] = rng.random(),
                    2 => bytes.truncate(at),
                    _ => bytes.insert(at, rng.random()),
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let root = Block::sha256(Version::V1, DAG_PB, bytes.into());
            store.insert(root.cid(), root.data().clone());
            let limits = ExportLimits::default().with_max_file_size(1 << 20);
            let mut exporter = UnixfsExporter::new(root.cid(), limits);
            let mut produced = 0u64;
            let outcome = loop {
                let Some(cid) = exporter.want().copied() else { break Ok(()) };
                let Some(block) = store.get(&cid).cloned() else { break Err(()) };
                match exporter.provide(block) {
                    Ok(data) => produced += data.len() as u64,
                    Err(_) => break Err(()),
                }
            };
            match outcome {
                Ok(()) => {
                    assert_eq!(Some(produced), exporter.file_size());
                    accepted += 1;
                }
                Err(()) => refused += 1,
            }
        }
        assert!(accepted > 0 && refused > 0, "accepted {accepted}, refused {refused}");
    }
}
