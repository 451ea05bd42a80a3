//! Blocks packed several to a record, for a backend whose every record costs a fixed price.
//!
//! In Chromium's IndexedDB on disk a put costs about the same whatever its size, up to the
//! 64 KiB past which a value goes to a blob file ([`PACK_BYTES`]). 20,000 incompressible 4 KiB
//! blocks through this store (`cargo xtask bench browser --cases idb_put_4k_batched`) went in
//! at 21,700-26,000 a second, 15 to a pack; at 16 to a pack, just over that limit,
//! 7,600-10,300. A pack is two records under its
//! number: its blocks' bytes end to end, and its index, each block's multihash and size in
//! order. The indexes alone say what the store holds; [`Packs`] keeps that in memory, so that a
//! lookup needs no transaction and a read is one record.

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;

use super::{BlockKey, Corruption};

/// A pack of blocks up to this size is closed at this many bytes; bigger blocks have packs of their
/// own ([`LARGE_PACK_BYTES`]).
///
/// Just under 64 KiB: Chromium moves a value whose serialisation exceeds 64 KiB out of the
/// database into a blob file of its own (`kDefaultWrapThreshold` in Blink's
/// `idb_value_wrapping.h`), and such a put costs far more. 64 MiB of random bytes put in
/// transactions of 4 MiB (plain JavaScript in the bench's browser) ran at 106-127 MB/s in records
/// of 61,440-65,500 bytes and at 35-44 MB/s in records of 65,510-65,536, which the
/// serialisation's few dozen bytes carry over the threshold. (Bytes that compress well stay
/// fast past it, since Chromium compresses such a value first; content rarely does.)
pub const PACK_BYTES: usize = 63 << 10;

/// A pack of blocks bigger than [`PACK_BYTES`] is closed at this many bytes; a bigger block still
/// is a pack alone.
///
/// Such a pack is a blob file in Chromium whatever its size, and each file has its price. 64 MiB
/// of random bytes put from a worker in transactions of 4 MiB (plain JavaScript in the bench's
/// browser, three rounds) took 397-430 ms and 680-730 ms of the browser's CPU in records of
/// 256 KiB, 279-297 ms and 470-490 ms in records of 1 MiB, and 332-362 ms and 400-430 ms in
/// records of 4 MiB. A read takes its whole pack (the store keeps the last one read, see
/// `recent_pack`), so the size is the fastest one, not the largest.
pub const LARGE_PACK_BYTES: usize = 1 << 20;

/// Where a block's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub pack: u32,
    pub offset: usize,
    pub len: usize,
}

impl Location {
    /// The block's bytes in its pack's `data`.
    pub fn slice<'a>(&self, data: &'a [u8]) -> Result<&'a [u8], Corruption> {
        data.get(self.offset..self.offset + self.len).ok_or(Corruption::NotAPack)
    }
}

/// A pack to write: its records, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pack {
    pub number: u32,
    pub data: Vec<u8>,
    pub index: Vec<u8>,
    blocks: Vec<(BlockKey, Location)>,
}

impl Pack {
    fn new(number: u32) -> Self {
        Self { number, data: Vec::new(), index: Vec::new(), blocks: Vec::new() }
    }

    fn push(&mut self, hash: BlockKey, data: &[u8]) {
        let at = Location { pack: self.number, offset: self.data.len(), len: data.len() };
        self.data.extend_from_slice(data);
        self.index.extend_from_slice(&hash.to_bytes());
        self.index.extend_from_slice(&(data.len() as u32).to_le_bytes());
        self.blocks.push((hash, at));
    }

    fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

/// Every stored block's location, and the next pack's number.
#[derive(Debug, Default)]
pub struct Packs {
    blocks: HashMap<BlockKey, Location>,
    next: u32,
}

impl Packs {
    /// What the stored packs hold, from each one's number and index.
    pub fn from_indexes(
        indexes: impl IntoIterator<Item = (u32, Vec<u8>)>,
    ) -> Result<Self, Corruption> {
        let mut packs = Self::default();
        for (number, index) in indexes {
            for (hash, at) in read_index(number, &index)? {
                packs.blocks.insert(hash, at);
            }
            packs.next = packs.next.max(number + 1);
        }
        Ok(packs)
    }

    pub fn location(&self, hash: &BlockKey) -> Option<Location> {
        self.blocks.get(hash).copied()
    }

    /// Every block held, with its size.
    pub fn inventory(&self) -> Vec<(BlockKey, usize)> {
        self.blocks.iter().map(|(hash, at)| (*hash, at.len)).collect()
    }

    /// New packs for the `blocks` not held yet, each once. Blocks up to [`PACK_BYTES`] share packs
    /// of at most that size, bigger ones packs of at most [`LARGE_PACK_BYTES`]. They count as held
    /// only once [`Packs::committed`].
    pub fn pack(&mut self, blocks: &[(BlockKey, Bytes)]) -> Vec<Pack> {
        let mut seen = HashSet::new();
        let mut packs = Vec::new();
        let (mut small, mut large) = (None, None);
        for (hash, data) in blocks {
            if self.blocks.contains_key(hash) || !seen.insert(*hash) {
                continue;
            }
            let (open, limit) = match data.len() > PACK_BYTES {
                true => (&mut large, LARGE_PACK_BYTES),
                false => (&mut small, PACK_BYTES),
            };
            if open.as_ref().is_some_and(|p: &Pack| p.data.len() + data.len() > limit) {
                packs.extend(open.take());
            }
            let pack = open.get_or_insert_with(|| {
                self.next += 1;
                Pack::new(self.next - 1)
            });
            pack.push(*hash, data);
        }
        packs.extend(small.into_iter().chain(large));
        packs
    }

    /// Records that `packs` are stored.
    pub fn committed<'a>(&mut self, packs: impl IntoIterator<Item = &'a Pack>) {
        for pack in packs {
            self.blocks.extend(pack.blocks.iter().copied());
        }
    }

    /// The packs that hold any of `hashes`, with the hashes each holds.
    pub fn holding(&self, hashes: &[BlockKey]) -> BTreeMap<u32, HashSet<BlockKey>> {
        let mut holding: BTreeMap<u32, HashSet<BlockKey>> = BTreeMap::new();
        for hash in hashes {
            if let Some(at) = self.blocks.get(hash) {
                holding.entry(at.pack).or_default().insert(*hash);
            }
        }
        holding
    }

    /// Pack `number`, as stored in `data` and `index`, without the `dropped` blocks, as a new
    /// pack (so that a read that found the old location finds no pack rather than other bytes):
    /// `None` when nothing else is in it.
    pub fn without(
        &mut self,
        number: u32,
        data: &[u8],
        index: &[u8],
        dropped: &HashSet<BlockKey>,
    ) -> Result<Option<Pack>, Corruption> {
        let mut kept = Pack::new(self.next);
        for (hash, at) in read_index(number, index)? {
            if !dropped.contains(&hash) {
                kept.push(hash, at.slice(data)?);
            }
        }
        if kept.is_empty() {
            return Ok(None);
        }
        self.next += 1;
        Ok(Some(kept))
    }

    /// Records that pack `number` is gone, its remaining blocks now in `kept`.
    pub fn replaced(&mut self, number: u32, kept: Option<&Pack>) {
        self.blocks.retain(|_, at| at.pack != number);
        self.committed(kept);
    }
}

/// The blocks a pack's index lists, with their places in its data.
fn read_index(number: u32, mut index: &[u8]) -> Result<Vec<(BlockKey, Location)>, Corruption> {
    let mut blocks = Vec::new();
    let mut offset = 0;
    while !index.is_empty() {
        let hash = BlockKey::read(&mut index).map_err(|_| Corruption::NotAMultihash)?;
        let (len, rest) = index.split_first_chunk::<4>().ok_or(Corruption::NotAPack)?;
        let len = u32::from_le_bytes(*len) as usize;
        index = rest;
        blocks.push((hash, Location { pack: number, offset, len }));
        offset += len;
    }
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncscope_proto::bitswap::raw_cid;

    fn block(i: usize, len: usize) -> (BlockKey, Bytes) {
        let data = Bytes::from((0..len).map(|j| (i * 31 + j) as u8).collect::<Vec<_>>());
        (*raw_cid(&data).hash(), data)
    }

    /// What a backend would read back: each pack's index, and each block from its pack's data.
    fn stored(packs: &[Pack]) -> (Packs, HashMap<u32, Vec<u8>>) {
        let indexes = packs.iter().map(|p| (p.number, p.index.clone()));
        let data = packs.iter().map(|p| (p.number, p.data.clone())).collect();
        (Packs::from_indexes(indexes).unwrap(), data)
    }

    fn read(packs: &Packs, data: &HashMap<u32, Vec<u8>>, hash: &BlockKey) -> Option<Vec<u8>> {
        let at = packs.location(hash)?;
        Some(at.slice(&data[&at.pack]).unwrap().to_vec())
    }

    #[test]
    fn small_blocks_share_packs_of_at_most_pack_bytes_and_read_back() {
        let blocks: Vec<_> = (0..40).map(|i| block(i, 4096)).collect();
        let packs = Packs::default().pack(&blocks);
        assert_eq!(packs.len(), 3, "15 + 15 + 10 blocks of 4 KiB");
        assert!(packs.iter().all(|p| p.data.len() <= PACK_BYTES));
        assert_eq!(packs.iter().map(|p| p.number).collect::<Vec<_>>(), [0, 1, 2]);
        let (reopened, data) = stored(&packs);
        for (hash, bytes) in &blocks {
            assert_eq!(read(&reopened, &data, hash).as_deref(), Some(&bytes[..]));
        }
        assert_eq!(reopened.inventory().len(), 40);
    }

    #[test]
    fn big_blocks_share_packs_of_their_own_and_read_back() {
        let mut blocks: Vec<_> = (0..6).map(|i| block(i, 256 << 10)).collect();
        blocks.insert(2, block(6, 100));
        blocks.push(block(7, 100));
        let packs = Packs::default().pack(&blocks);
        let sizes: Vec<_> = packs.iter().map(|p| (p.number, p.data.len())).collect();
        assert_eq!(sizes, [(0, LARGE_PACK_BYTES), (1, 200), (2, 2 * (256 << 10))]);
        let (reopened, data) = stored(&packs);
        for (hash, bytes) in &blocks {
            assert_eq!(read(&reopened, &data, hash).as_deref(), Some(&bytes[..]));
        }
    }

    #[test]
    fn a_block_bigger_than_a_large_pack_is_a_pack_alone() {
        let blocks = [block(0, 256 << 10), block(1, 2 << 20), block(2, 256 << 10)];
        let sizes: Vec<_> = Packs::default().pack(&blocks).iter().map(|p| p.data.len()).collect();
        assert_eq!(sizes, [256 << 10, 2 << 20, 256 << 10]);
    }

    #[test]
    fn blocks_held_or_repeated_are_packed_once_and_numbers_go_on() {
        let mut packs = Packs::default();
        let first = packs.pack(&[block(0, 10), block(0, 10)]);
        assert_eq!(first[0].blocks.len(), 1);
        packs.committed(&first);
        let second = packs.pack(&[block(0, 10), block(1, 10)]);
        assert_eq!((second[0].number, second[0].blocks.len()), (1, 1));
        packs.committed(&second);
        let (mut reopened, _) = stored(&[first, second].concat());
        assert_eq!(reopened.pack(&[block(2, 10)])[0].number, 2);
    }

    #[test]
    fn uncommitted_packs_hold_nothing() {
        let mut packs = Packs::default();
        let (hash, _) = block(0, 10);
        let _ = packs.pack(&[block(0, 10)]);
        assert_eq!(packs.location(&hash), None);
    }

    #[test]
    fn a_pack_without_some_blocks_keeps_the_others_readable() {
        let blocks: Vec<_> = (0..4).map(|i| block(i, 1000)).collect();
        let mut packs = Packs::default();
        let written = packs.pack(&blocks);
        packs.committed(&written);
        let dropped: HashSet<_> = [blocks[1].0, blocks[2].0].into();
        assert_eq!(
            packs.holding(&[blocks[1].0, blocks[2].0]),
            BTreeMap::from([(0, dropped.clone())])
        );
        let kept =
            packs.without(0, &written[0].data, &written[0].index, &dropped).unwrap().unwrap();
        assert_eq!(kept.number, 1, "a new pack");
        packs.replaced(0, Some(&kept));
        let data = HashMap::from([(1, kept.data)]);
        for (i, (hash, bytes)) in blocks.iter().enumerate() {
            let expected = [0, 3].contains(&i).then(|| bytes.to_vec());
            assert_eq!(read(&packs, &data, hash), expected, "block {i}");
        }
        let all: HashSet<_> = [blocks[0].0, blocks[3].0].into();
        let p = &written[0];
        let none = all.union(&dropped).copied().collect();
        assert_eq!(packs.without(0, &p.data, &p.index, &none), Ok(None));
        assert_eq!(packs.pack(&[block(9, 10)])[0].number, 2, "no number taken for nothing");
    }

    #[test]
    fn a_damaged_index_or_short_data_is_corruption_not_a_panic() {
        let packs = Packs::default().pack(&[block(0, 100), block(1, 100)]);
        let p = &packs[0];
        let entry = p.index.len() / 2;
        for cut in (1..p.index.len()).filter(|&cut| cut != entry) {
            let truncated = Packs::from_indexes([(0, p.index[..cut].to_vec())]);
            assert!(truncated.is_err(), "index cut at {cut}");
        }
        let short = Packs::default().without(0, &p.data[..150], &p.index, &HashSet::new());
        assert_eq!(short, Err(Corruption::NotAPack));
    }
}
