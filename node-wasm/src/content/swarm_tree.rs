//! The chunks of Swarm files' trees, found by reading only their intermediate chunks: what a node
//! frees when it removes a file it holds. Sans-IO, like the joiner: [`SwarmTree::to_read`] names
//! the chunks to read next, a level at a time, and [`SwarmTree::provide`] takes what was held.
//!
//! A parent's span gives each child's, so data chunks (1/128 of a tree's bytes sit above them)
//! are named without being read. A chunk not held, or not of the shape its parent implies, ends
//! the walk below it: the tree of a partial file is walked as far as it is stored.

use std::collections::HashSet;

use syncscope_proto::swarm::{Address, Chunk, CHUNK_SIZE};

use super::swarm_join::{children, Wanted};

#[derive(Debug)]
pub struct SwarmTree {
    addresses: HashSet<Address>,
    /// Intermediate chunks (or the root, whose span is unknown) not yet read.
    unread: Vec<Wanted>,
}

impl SwarmTree {
    /// The trees under `roots`, walked together: a chunk they share is read once.
    pub fn new(roots: impl IntoIterator<Item = Address>) -> Self {
        let mut tree = SwarmTree { addresses: HashSet::new(), unread: Vec::new() };
        for address in roots {
            tree.found(Wanted { address, span: None });
        }
        tree
    }

    /// The chunks to read next; empty once the walk is done.
    pub fn to_read(&self) -> Vec<Address> {
        self.unread.iter().map(|w| w.address).collect()
    }

    /// Takes the chunks [`to_read`](Self::to_read) named, in its order, each `None` where it
    /// is not held.
    pub fn provide(&mut self, read: Vec<Option<Chunk>>) {
        let level = std::mem::take(&mut self.unread);
        for (wanted, chunk) in level.into_iter().zip(read) {
            let Some(chunk) = chunk.filter(|c| c.address() == wanted.address) else { continue };
            let span = chunk.span();
            if span <= CHUNK_SIZE as u64 || wanted.span.is_some_and(|s| s != span) {
                continue;
            }
            for child in children(span, chunk.payload()).unwrap_or_default() {
                self.found(child);
            }
        }
    }

    /// Every chunk of the tree named so far: all of them once [`to_read`](Self::to_read) is
    /// empty.
    pub fn into_addresses(self) -> HashSet<Address> {
        self.addresses
    }

    fn found(&mut self, chunk: Wanted) {
        let intermediate = chunk.span.is_none_or(|span| span > CHUNK_SIZE as u64);
        if self.addresses.insert(chunk.address) && intermediate {
            self.unread.push(chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::demo::demo_stamp;
    use crate::content::swarm_split::split_bytes;
    use std::collections::HashMap;

    fn walk(root: Address, held: &HashMap<Address, Chunk>) -> (HashSet<Address>, usize) {
        let mut tree = SwarmTree::new([root]);
        let mut reads = 0;
        loop {
            let next = tree.to_read();
            if next.is_empty() {
                return (tree.into_addresses(), reads);
            }
            reads += next.len();
            tree.provide(next.iter().map(|a| held.get(a).cloned()).collect());
        }
    }

    #[test]
    fn names_every_chunk_of_a_tree_reading_only_intermediate_ones() {
        for size in [0, 10, 4096, 4097, 128 * 4096, 128 * 4096 + 1, 3 * 128 * 4096 + 5000] {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let file = split_bytes(&data, demo_stamp(3));
            let held: HashMap<Address, Chunk> =
                file.chunks.iter().map(|c| (c.address(), c.clone())).collect();
            let (addresses, reads) = walk(file.root, &held);
            assert_eq!(addresses, held.keys().copied().collect(), "size {size}");
            let intermediate = held.values().filter(|c| c.span() > CHUNK_SIZE as u64).count();
            assert_eq!(reads, intermediate.max(1), "size {size}");
        }
    }

    #[test]
    fn a_missing_intermediate_chunk_ends_the_walk_below_it() {
        let data = vec![9u8; 3 * 128 * 4096];
        let file = split_bytes(&data, demo_stamp(3));
        let mut held: HashMap<Address, Chunk> =
            file.chunks.iter().map(|c| (c.address(), c.clone())).collect();
        let (whole, _) = walk(file.root, &held);
        held.remove(&file.root);
        let (partial, _) = walk(file.root, &held);
        assert_eq!(partial, HashSet::from([file.root]));
        assert!(whole.len() > partial.len());
    }
}
