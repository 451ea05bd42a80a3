//! Offer-want handling and page recording: which offered chunks to want, checking deliveries
//! against the offer, and recording a page once the chunks it skipped have settled elsewhere.

use std::fmt::Debug;
use std::hash::Hash;

use bytes::Bytes;
use web_time::Instant;

use super::{
    DeliveredPage, Outbound, PageState, PullError, Puller, PullerEvent, Task, Worker,
    SKIPPING_REFETCHES,
};
use crate::pullsync::in_flight::Settle;
use crate::pullsync::interval::IntervalStore;
use crate::pullsync::message::{self, Delivery, Offer, Want};
use crate::pullsync::reserve::ChunkPresence;
use crate::pullsync::stream::StreamId;
use crate::pullsync::want::encode_want;
use crate::swarm::{Address, Chunk, ChunkRef, Stamp};

impl<P: Copy + Eq + Hash + Debug, S: IntervalStore> Puller<P, S> {
    pub(super) fn handle_offer(
        &mut self,
        now: Instant,
        stream: StreamId,
        offer: Offer,
        have: &impl ChunkPresence,
    ) -> Result<(), PullError> {
        let ((start, refetch), max) = (self.page_of(stream), self.config.max_page);
        if offer.chunks.len() > max {
            return Err(PullError::OfferTooLarge { offered: offer.chunks.len(), max });
        }
        let offered = offer.chunks.iter().map(offered_ref).collect::<Result<Vec<_>, _>>()?;
        if !offered.is_empty() && offer.topmost < start {
            return Err(PullError::Topmost { start, topmost: offer.topmost });
        }
        self.stats.pages += 1;
        self.stats.chunks_offered += offered.len() as u64;
        if offered.is_empty() {
            self.complete_page(now, stream, offer.topmost);
            return Ok(());
        }
        let wanted_flags: Vec<bool> =
            offered.iter().map(|c| self.want_offered(stream, refetch, c, have)).collect();
        let wanted: Vec<ChunkRef> =
            offered.iter().zip(&wanted_flags).filter(|(_, w)| **w).map(|(c, _)| *c).collect();
        self.stats.chunks_wanted += wanted.len() as u64;
        let awaiting = !wanted.is_empty();
        // The stream holds its wants before the Want is sent, so a send failure releases them.
        if let Some(out) = self.streams.get_mut(&stream).filter(|_| awaiting) {
            out.deadline = Some(now + self.config.stream_timeout);
            if let Task::Page { state, .. } = &mut out.task {
                *state = PageState::AwaitDeliveries { topmost: offer.topmost, wanted, next: 0 };
            }
        }
        self.send(now, stream, &Want { bit_vector: encode_want(wanted_flags.into_iter()) });
        if !awaiting {
            self.complete_page(now, stream, offer.topmost);
        }
        Ok(())
    }

    /// Whether to want an offered chunk on `stream`, whose page has been fetched again `refetch`
    /// times: one in our radius that we lack and that is not already wanted. One wanted on
    /// another stream is skipped, and the page waits for it, unless the page has been lost
    /// too often (see [`SKIPPING_REFETCHES`]); then it is wanted here as well, and stays tracked
    /// on the stream it was first wanted on, for the pages waiting there.
    fn want_offered(
        &mut self,
        stream: StreamId,
        refetch: u8,
        c: &ChunkRef,
        have: &impl ChunkPresence,
    ) -> bool {
        if c.address.is_zero() || self.overlay.proximity(&c.address) < self.radius || have.has(c) {
            return false;
        }
        match self.in_flight.wanted_on(c) {
            None => {
                self.in_flight.want(*c, stream);
                true
            }
            // Offered twice in one page: the first want covers it.
            Some(on) if on == stream => false,
            Some(_) if refetch > SKIPPING_REFETCHES => true,
            Some(_) => {
                self.in_flight.skip(c, stream);
                self.stats.chunks_skipped_in_flight += 1;
                false
            }
        }
    }

    pub(super) fn handle_batch(&mut self, stream: StreamId, frame: Bytes) -> Result<(), PullError> {
        let mut batch = std::mem::take(&mut self.batch);
        let result = message::merge(&mut batch, frame).map_err(PullError::from).and_then(|()| {
            batch.deliveries.drain(..).try_for_each(|d| self.handle_delivery(stream, d))
        });
        batch.deliveries.clear();
        self.batch = batch;
        result
    }

    /// Checks one delivery against the next wanted chunk and its address, and hands it on.
    pub(super) fn handle_delivery(
        &mut self,
        stream: StreamId,
        d: Delivery,
    ) -> Result<(), PullError> {
        let Some(out) = self.streams.get_mut(&stream) else { return Err(PullError::Unexpected) };
        let peer = out.peer;
        let Task::Page { bin, state: PageState::AwaitDeliveries { wanted, next, .. }, .. } =
            &mut out.task
        else {
            return Err(PullError::Unexpected);
        };
        let bin = *bin;
        let Some(expected) = wanted.get(*next).copied() else {
            return Err(PullError::Unexpected);
        };
        let address = Address::from_slice(&d.address)?;
        if address.is_zero() && d.data.is_empty() {
            *next += 1;
            self.stats.chunks_missing += 1;
            self.in_flight.resolve(&expected, stream, false);
            return Ok(());
        }
        if address != expected.address {
            self.stats.chunks_rejected += 1;
            return Err(match wanted.iter().any(|w| w.address == address) {
                true => PullError::OutOfOrder(address),
                false => PullError::NotWanted(address),
            });
        }
        *next += 1;
        let checked = Stamp::new(d.stamp).map_err(PullError::from).and_then(|stamp| {
            if stamp.batch_id() != expected.batch_id || stamp.hash() != expected.stamp_hash {
                return Err(PullError::StampMismatch(address));
            }
            Ok(Chunk::verify(address, d.data, stamp)?)
        });
        let chunk = checked.inspect_err(|_| self.stats.chunks_rejected += 1)?;
        self.in_flight.resolve(&expected, stream, true);
        self.stats.chunks_delivered += 1;
        self.stats.chunk_bytes += chunk.data().len() as u64;
        self.events.push_back(PullerEvent::Chunk { peer, bin, chunk });
        Ok(())
    }

    pub(super) fn after_deliveries(&mut self, now: Instant, stream: StreamId) {
        self.settle_held(now);
        let timeout = self.config.stream_timeout;
        let Some(out) = self.streams.get_mut(&stream) else { return };
        out.deadline = Some(now + timeout);
        if let Task::Page { state: PageState::AwaitDeliveries { topmost, wanted, next }, .. } =
            &out.task
        {
            if *next == wanted.len() {
                let topmost = *topmost;
                self.complete_page(now, stream, topmost);
            }
        }
    }

    /// The page on `stream` got all its own deliveries: closes the stream and records the page,
    /// or holds it while chunks it skipped are in flight elsewhere.
    fn complete_page(&mut self, now: Instant, stream: StreamId, topmost: u64) {
        let Some(Outbound { peer, task: Task::Page { bin, live, start, refetch, .. }, .. }) =
            self.streams.get(&stream)
        else {
            return;
        };
        let (peer, bin, live, start, refetch) = (*peer, *bin, *live, *start, *refetch);
        let page = DeliveredPage { peer, bin, live, start, refetch, topmost };
        self.close(stream);
        self.settle_page(now, stream, page);
    }

    /// Records a delivered page whose skipped chunks all arrived, fetches it again if one did not,
    /// or holds it until they resolve.
    fn settle_page(&mut self, now: Instant, stream: StreamId, page: DeliveredPage<P>) {
        match self.in_flight.settle(stream) {
            Settle::Arrived => self.record(now, page),
            Settle::Failed => {
                self.stats.pages_refetched += 1;
                let refetch = page.refetch.saturating_add(1);
                self.next_page(now, page.peer, page.bin, page.live, refetch);
            }
            Settle::Pending => {
                self.held.insert(stream, page);
                self.set_worker(page.peer, page.bin, page.live, Worker::Held(stream));
            }
        }
    }

    /// Settles the held pages whose skipped chunks resolved since the last call.
    pub(super) fn settle_held(&mut self, now: Instant) {
        while let Some(stream) = self.in_flight.pop_settled() {
            if let Some(page) = self.held.remove(&stream) {
                self.settle_page(now, stream, page);
            }
        }
    }

    /// Records `start..=topmost` and moves the bin's worker on to its next page.
    fn record(&mut self, now: Instant, page: DeliveredPage<P>) {
        let DeliveredPage { peer, bin, live, start, topmost, .. } = page;
        let Some(overlay) = self.peers.get(&peer).map(|p| p.overlay) else { return };
        if topmost >= start {
            if let Err(error) = self.store.add(&overlay, bin, start, topmost) {
                self.events.push_back(PullerEvent::StoreFailed { peer, bin, error });
                let retry = Worker::RetryAt(now + self.config.retry_delay);
                return self.set_worker(peer, bin, live, retry);
            }
            self.events.push_back(PullerEvent::IntervalSynced {
                peer,
                bin,
                start,
                end: topmost,
                live,
            });
            if let Some(b) = self.bin_mut(peer, bin).filter(|_| live) {
                b.live_start = topmost + 1;
            }
        }
        self.next_page(now, peer, bin, live, 0);
    }
}

fn offered_ref(c: &message::Chunk) -> Result<ChunkRef, PullError> {
    let field =
        |b: &Bytes| <[u8; 32]>::try_from(&b[..]).map_err(|_| PullError::OfferedStampRef(b.len()));
    Ok(ChunkRef {
        address: Address::from_slice(&c.address)?,
        batch_id: field(&c.batch_id)?,
        stamp_hash: field(&c.stamp_hash)?,
    })
}
