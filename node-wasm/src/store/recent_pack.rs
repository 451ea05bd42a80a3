//! The pack read last, kept and shared by every read that wants a block from it.
//!
//! Blocks are mostly read in the order they were stored (a peer's fetch, a download), and a pack
//! holds several: up to four 256 KiB blocks ([`super::block_packs::LARGE_PACK_BYTES`]). The
//! Bitswap server starts the reads of several wanted blocks at once, so without this each one
//! would read the whole pack again. Packs never change under their number (a removal writes a new
//! one), so what is kept never goes stale.

use std::cell::RefCell;
use std::future::Future;

use futures::channel::oneshot;

use super::StoreError;

type PackRead<T> = Result<Option<T>, StoreError>;

enum State<T> {
    /// Read under way; these wait for its result.
    Reading(Vec<oneshot::Sender<PackRead<T>>>),
    Read(T),
}

pub struct RecentPack<T> {
    state: RefCell<Option<(u32, State<T>)>>,
}

impl<T> Default for RecentPack<T> {
    fn default() -> Self {
        Self { state: RefCell::new(None) }
    }
}

impl<T: Clone> RecentPack<T> {
    /// Pack `number`: the one kept, the result of its read under way, or else `read()`'s.
    pub async fn get<F: Future<Output = PackRead<T>>>(
        &self,
        number: u32,
        read: impl FnOnce() -> F,
    ) -> PackRead<T> {
        match self.join(number) {
            Joined::Kept(pack) => Ok(Some(pack)),
            // The read was given up (its future dropped, or another pack's read took over): read.
            Joined::Waiting(result) => match result.await {
                Ok(result) => result,
                Err(oneshot::Canceled) => read().await,
            },
            Joined::Leading => {
                let leader = Leader { recent: self, number };
                let result = read().await;
                leader.finish(&result);
                result
            }
        }
    }

    fn join(&self, number: u32) -> Joined<T> {
        let mut state = self.state.borrow_mut();
        match &mut *state {
            Some((n, State::Read(pack))) if *n == number => Joined::Kept(pack.clone()),
            Some((n, State::Reading(waiting))) if *n == number => {
                let (tx, rx) = oneshot::channel();
                waiting.push(tx);
                Joined::Waiting(rx)
            }
            _ => {
                *state = Some((number, State::Reading(Vec::new())));
                Joined::Leading
            }
        }
    }
}

enum Joined<T> {
    Kept(T),
    Waiting(oneshot::Receiver<PackRead<T>>),
    Leading,
}

/// The read of a pack that others may wait for. Dropped unfinished, it lets them go, to read for
/// themselves.
struct Leader<'a, T> {
    recent: &'a RecentPack<T>,
    number: u32,
}

impl<T: Clone> Leader<'_, T> {
    fn finish(self, result: &PackRead<T>) {
        let Some(waiting) = self.take_waiting() else { return };
        if let Ok(Some(pack)) = result {
            *self.recent.state.borrow_mut() = Some((self.number, State::Read(pack.clone())));
        }
        for tx in waiting {
            let _ = tx.send(result.clone());
        }
    }
}

impl<T> Leader<'_, T> {
    /// Those waiting for this read, if it is still the one under way.
    fn take_waiting(&self) -> Option<Vec<oneshot::Sender<PackRead<T>>>> {
        let mut state = self.recent.state.borrow_mut();
        match state.take() {
            Some((n, State::Reading(waiting))) if n == self.number => Some(waiting),
            other => {
                *state = other;
                None
            }
        }
    }
}

impl<T> Drop for Leader<'_, T> {
    fn drop(&mut self) {
        drop(self.take_waiting());
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use futures::channel::oneshot;
    use futures::executor::block_on;
    use futures::future::{join, join3, LocalBoxFuture};
    use futures::FutureExt;

    use super::*;

    /// A read of pack `number` that counts itself and finishes when `go` fires.
    fn read(
        reads: &Rc<Cell<u32>>,
        number: u32,
        go: oneshot::Receiver<()>,
    ) -> impl FnOnce() -> LocalBoxFuture<'static, PackRead<u32>> {
        let reads = reads.clone();
        move || {
            reads.set(reads.get() + 1);
            async move {
                let _ = go.await;
                Ok(Some(number * 10))
            }
            .boxed_local()
        }
    }

    fn ready_read(
        reads: &Rc<Cell<u32>>,
        number: u32,
    ) -> impl FnOnce() -> LocalBoxFuture<'static, PackRead<u32>> {
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(());
        read(reads, number, rx)
    }

    /// A store's recent pack, and a count of the reads made.
    fn fresh() -> (RecentPack<u32>, Rc<Cell<u32>>) {
        (RecentPack::default(), Rc::new(Cell::new(0)))
    }

    #[test]
    fn reads_of_one_pack_at_once_share_one_read_and_later_ones_none() {
        let (recent, reads) = fresh();
        let (go, wait) = oneshot::channel();
        let first = recent.get(1, read(&reads, 1, wait));
        let second = recent.get(1, ready_read(&reads, 1));
        let release = async { go.send(()).unwrap() };
        let (a, b, ()) = block_on(join3(first, second, release));
        assert_eq!((a.ok(), b.ok(), reads.get()), (Some(Some(10)), Some(Some(10)), 1));
        assert_eq!(block_on(recent.get(1, ready_read(&reads, 1))).ok(), Some(Some(10)));
        assert_eq!(reads.get(), 1, "kept");
        assert_eq!(block_on(recent.get(2, ready_read(&reads, 2))).ok(), Some(Some(20)));
        assert_eq!(reads.get(), 2, "another pack is read");
    }

    #[test]
    fn a_missing_pack_or_a_failed_read_is_not_kept() {
        let recent = RecentPack::<u32>::default();
        let missing = block_on(recent.get(1, || async { Ok(None) }));
        assert_eq!(missing.ok(), Some(None));
        let failed = block_on(recent.get(1, || async { Err(StoreError::Stopped) }));
        assert!(matches!(failed, Err(StoreError::Stopped)));
        let reads = Rc::new(Cell::new(0));
        assert_eq!(block_on(recent.get(1, ready_read(&reads, 1))).ok(), Some(Some(10)));
        assert_eq!(reads.get(), 1);
    }

    #[test]
    fn a_waiting_read_reads_for_itself_once_the_read_it_waits_for_is_dropped() {
        let (recent, reads) = fresh();
        let (_never, wait) = oneshot::channel();
        let mut leader = Box::pin(recent.get(1, read(&reads, 1, wait)));
        assert!((&mut leader).now_or_never().is_none(), "its read is under way");
        let mut waiter = Box::pin(recent.get(1, ready_read(&reads, 1)));
        assert!((&mut waiter).now_or_never().is_none(), "it waits for the leader's read");
        drop(leader);
        assert_eq!(block_on(waiter).ok(), Some(Some(10)));
        assert_eq!(reads.get(), 2);
    }

    #[test]
    fn a_read_of_another_pack_takes_over_and_its_waiters_read_for_themselves() {
        let (recent, reads) = fresh();
        let (go, wait) = oneshot::channel();
        let first = recent.get(1, read(&reads, 1, wait));
        let waiter = recent.get(1, ready_read(&reads, 1));
        let other = async {
            let other = recent.get(2, ready_read(&reads, 2)).await;
            go.send(()).unwrap();
            other
        };
        let ((a, b), c) = block_on(join(join(first, waiter), other));
        assert_eq!((a.ok(), b.ok(), c.ok()), (Some(Some(10)), Some(Some(10)), Some(Some(20))));
    }
}
