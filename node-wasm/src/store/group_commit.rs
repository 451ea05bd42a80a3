//! Group commit: puts that arrive while a write is under way wait, and go out together in the next
//! one. A backend whose every transaction costs a fixed price (an `fsync`, an IndexedDB commit)
//! then spends one per batch of deliveries rather than one per block: under load batches grow by
//! themselves, and a lone put is written at once.
//!
//! A backend whose transactions finish well within the time between deliveries would still write
//! one block per transaction. [`GroupCommit::paced`] starts at most one transaction per `pace`
//! under sustained load, so that puts arriving in between join it; after a quiet `pace` a put is
//! again written at once.
//!
//! A put's future resolves when the transaction holding it has committed, so a block counts as
//! stored only once it is.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures::channel::oneshot;
use web_time::{Duration, Instant};

use super::{BlockKey, StoreError};
use crate::cond_send::{CondSend, CondSync};
use crate::rt;

/// One transaction's worth is closed at this many bytes, so that a burst of puts cannot build a
/// transaction the backend would hold in memory whole.
const MAX_BATCH_BYTES: usize = 16 << 20;

/// What a backend does with a batch.
pub trait BatchWrite: CondSync + 'static {
    /// Writes every `(key, data)` in one transaction: all of them, or none and an error.
    fn write(
        &self,
        batch: Vec<(BlockKey, Bytes)>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend;
}

/// Puts for a [`BatchWrite`] backend, grouped.
pub struct GroupCommit<W> {
    shared: Arc<Shared<W>>,
}

struct Shared<W> {
    backend: W,
    pace: Duration,
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    waiting: Vec<Waiting>,
    writing: bool,
    /// When the last transaction started, for the pace.
    last_write: Option<Instant>,
}

struct Waiting {
    blocks: Vec<(BlockKey, Bytes)>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

impl<W: BatchWrite> GroupCommit<W> {
    /// Starts each transaction as soon as the one before it has committed.
    pub fn new(backend: W) -> Self {
        Self::paced(backend, Duration::ZERO)
    }

    /// Starts each transaction once the one before it has committed and at least `pace` after
    /// it started.
    pub fn paced(backend: W, pace: Duration) -> Self {
        Self { shared: Arc::new(Shared { backend, pace, queue: Mutex::default() }) }
    }

    pub fn backend(&self) -> &W {
        &self.shared.backend
    }

    /// Writes `blocks` in the next transaction, all together; resolves once it committed.
    pub fn put(
        &self,
        blocks: Vec<(BlockKey, Bytes)>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        let (done, committed) = oneshot::channel();
        let start_writer = {
            let mut queue = self.shared.lock();
            queue.waiting.push(Waiting { blocks, done });
            !std::mem::replace(&mut queue.writing, true)
        };
        if start_writer {
            rt::spawn(Shared::write_all(self.shared.clone()));
        }
        async move { committed.await.unwrap_or(Err(StoreError::Stopped)) }
    }
}

impl<W: BatchWrite> Shared<W> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes batches until nothing waits.
    async fn write_all(self: Arc<Self>) {
        loop {
            let since_last = self.lock().last_write.map(|at| at.elapsed());
            let wait = since_last.and_then(|since| self.pace.checked_sub(since));
            if let Some(wait) = wait.filter(|wait| !wait.is_zero()) {
                rt::sleep(wait).await;
            }
            let batch = self.next_batch();
            if batch.is_empty() {
                return;
            }
            let blocks = batch.iter().flat_map(|w| w.blocks.iter().cloned()).collect();
            let result = self.backend.write(blocks).await;
            for waiting in batch {
                let _ = waiting.done.send(result.clone());
            }
        }
    }

    /// The oldest puts up to [`MAX_BATCH_BYTES`] (at least one); none, and the writer stops, when
    /// nothing waits.
    fn next_batch(&self) -> Vec<Waiting> {
        let mut queue = self.lock();
        let mut bytes = 0;
        let mut take = 0;
        for waiting in &queue.waiting {
            bytes += waiting.blocks.iter().map(|(_, data)| data.len()).sum::<usize>();
            if take > 0 && bytes > MAX_BATCH_BYTES {
                break;
            }
            take += 1;
        }
        queue.writing = take > 0;
        if take > 0 {
            queue.last_write = Some(Instant::now());
        }
        queue.waiting.drain(..take).collect()
    }
}
