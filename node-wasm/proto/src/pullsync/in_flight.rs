//! Which offered chunks the puller has wanted on some stream and not yet received, and which pages
//! left such chunks unwanted because of that: the bookkeeping that lets several peers offering
//! the same chunks deliver each one once without losing any when a delivery fails.
//!
//! A page's stream is named by its [`StreamId`], which the puller never reuses, so a page that was
//! dropped (its stream failed or its bin stopped) can leave stale names behind harmlessly.

use super::stream::StreamId;
use crate::swarm::ChunkRef;
use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};

/// Where a page stands with the chunks it skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Settle {
    /// Some skipped chunk is still in flight elsewhere.
    Pending,
    /// It skipped nothing, or everything it skipped has arrived.
    Arrived,
    /// A chunk it skipped was not delivered where it was wanted.
    Failed,
}

#[derive(Debug)]
struct Want {
    stream: StreamId,
    /// Pages that skipped this chunk because of this want.
    skipped_by: Vec<StreamId>,
}

#[derive(Debug, Default)]
struct Skips {
    unresolved: usize,
    failed: bool,
}

impl Skips {
    fn settled(&self) -> bool {
        self.failed || self.unresolved == 0
    }
}

/// Chunks wanted and not yet delivered, each with the stream it is wanted on, and per page the
/// chunks it skipped that have not resolved yet. Its size is bounded by the wants of open pages.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    wants: HashMap<ChunkRef, Want>,
    skips: HashMap<StreamId, Skips>,
    /// Pages whose skipped chunks all arrived or one failed, for the puller to act on. Ordered,
    /// so pages settle oldest first whatever order their chunks resolved in (a failed stream
    /// releases its wants in hash order) and a simulated run is repeatable.
    settled: BTreeSet<StreamId>,
}

impl InFlight {
    /// The stream `chunk` is wanted on, if its delivery is still awaited.
    pub fn wanted_on(&self, chunk: &ChunkRef) -> Option<StreamId> {
        self.wants.get(chunk).map(|w| w.stream)
    }

    /// `chunk` is wanted on `stream`. The caller wants nothing already in flight.
    pub fn want(&mut self, chunk: ChunkRef, stream: StreamId) {
        self.wants.insert(chunk, Want { stream, skipped_by: Vec::new() });
    }

    /// `page` left `chunk` unwanted because it is in flight on another stream.
    pub fn skip(&mut self, chunk: &ChunkRef, page: StreamId) {
        if let Some(want) = self.wants.get_mut(chunk) {
            want.skipped_by.push(page);
            self.skips.entry(page).or_default().unresolved += 1;
        }
    }

    /// `chunk`, wanted on `stream`, arrived verified (`arrived`) or will not come from there.
    pub fn resolve(&mut self, chunk: &ChunkRef, stream: StreamId, arrived: bool) {
        let Entry::Occupied(entry) = self.wants.entry(*chunk) else { return };
        if entry.get().stream != stream {
            return;
        }
        for page in entry.remove().skipped_by {
            let Some(skips) = self.skips.get_mut(&page) else { continue };
            let was_settled = skips.settled();
            skips.unresolved -= 1;
            skips.failed |= !arrived;
            if !was_settled && skips.settled() {
                self.settled.insert(page);
            }
        }
    }

    /// `streams` are gone: whatever was wanted on them failed, and their own skips are forgotten.
    pub fn release(&mut self, streams: &[StreamId]) {
        let lost: Vec<(ChunkRef, StreamId)> = self
            .wants
            .iter()
            .filter(|(_, w)| streams.contains(&w.stream))
            .map(|(c, w)| (*c, w.stream))
            .collect();
        for (chunk, stream) in lost {
            self.resolve(&chunk, stream, false);
        }
        for stream in streams {
            self.forget(*stream);
        }
    }

    /// Where `page` stands; once it is no longer pending its record is dropped.
    pub fn settle(&mut self, page: StreamId) -> Settle {
        let Entry::Occupied(entry) = self.skips.entry(page) else { return Settle::Arrived };
        match (entry.get().failed, entry.get().unresolved) {
            (false, 0) => {
                entry.remove();
                Settle::Arrived
            }
            (false, _) => Settle::Pending,
            (true, _) => {
                entry.remove();
                Settle::Failed
            }
        }
    }

    /// Drops `page`'s skips: the page will not be recorded.
    pub fn forget(&mut self, page: StreamId) {
        self.skips.remove(&page);
    }

    /// The oldest page that stopped pending since the last call.
    pub fn pop_settled(&mut self) -> Option<StreamId> {
        self.settled.pop_first()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.wants.is_empty() && self.skips.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swarm::Address;

    fn chunk(i: u8) -> ChunkRef {
        ChunkRef { address: Address([i; 32]), batch_id: [0; 32], stamp_hash: [i; 32] }
    }

    const A: StreamId = StreamId(1);
    const B: StreamId = StreamId(2);
    const C: StreamId = StreamId(3);

    /// Page B skipped chunks 1 and 2, both wanted on A.
    fn b_skipped_two_wanted_on_a() -> InFlight {
        let mut f = InFlight::default();
        f.want(chunk(1), A);
        f.want(chunk(2), A);
        f.skip(&chunk(1), B);
        f.skip(&chunk(2), B);
        f
    }

    #[test]
    fn a_page_settles_once_every_chunk_it_skipped_arrived() {
        let mut f = b_skipped_two_wanted_on_a();
        assert_eq!(f.wanted_on(&chunk(1)), Some(A));
        assert_eq!(f.settle(B), Settle::Pending);
        f.resolve(&chunk(1), A, true);
        assert_eq!((f.pop_settled(), f.settle(B)), (None, Settle::Pending));
        f.resolve(&chunk(2), A, true);
        assert_eq!(f.pop_settled(), Some(B));
        assert_eq!(f.settle(B), Settle::Arrived);
        assert!(f.is_empty());
    }

    #[test]
    fn one_failed_chunk_fails_the_page_at_once() {
        let mut f = b_skipped_two_wanted_on_a();
        f.resolve(&chunk(1), A, false);
        assert_eq!(f.pop_settled(), Some(B));
        f.resolve(&chunk(2), A, true);
        assert_eq!(f.pop_settled(), None, "settled once");
        assert_eq!(f.settle(B), Settle::Failed);
        assert!(f.is_empty());
    }

    #[test]
    fn only_the_stream_it_is_wanted_on_resolves_a_chunk() {
        let mut f = InFlight::default();
        f.want(chunk(1), A);
        f.skip(&chunk(1), B);
        f.resolve(&chunk(1), C, true);
        assert_eq!(f.wanted_on(&chunk(1)), Some(A));
        assert_eq!(f.settle(B), Settle::Pending);
    }

    #[test]
    fn releasing_a_stream_fails_its_wants_and_forgets_its_skips() {
        let mut f = InFlight::default();
        f.want(chunk(1), A);
        f.want(chunk(2), B);
        f.skip(&chunk(1), B);
        f.skip(&chunk(2), C);
        f.release(&[B]);
        assert_eq!(f.wanted_on(&chunk(2)), None);
        assert_eq!(f.pop_settled(), Some(C));
        assert_eq!(f.settle(C), Settle::Failed);
        // B's own skip is gone; A's delivery then settles nobody.
        assert_eq!(f.settle(B), Settle::Arrived);
        f.resolve(&chunk(1), A, true);
        assert_eq!(f.pop_settled(), None);
        assert!(f.is_empty());
    }

    #[test]
    fn pages_settle_oldest_first() {
        let mut f = InFlight::default();
        f.want(chunk(1), A);
        f.want(chunk(2), A);
        f.skip(&chunk(1), C);
        f.skip(&chunk(2), B);
        f.release(&[A]);
        assert_eq!((f.pop_settled(), f.pop_settled(), f.pop_settled()), (Some(B), Some(C), None));
    }

    #[test]
    fn a_page_that_skipped_nothing_has_arrived() {
        let mut f = InFlight::default();
        assert_eq!(f.settle(A), Settle::Arrived);
        f.skip(&chunk(9), A);
        assert_eq!(f.settle(A), Settle::Arrived, "skipping a chunk not in flight is a no-op");
    }
}
