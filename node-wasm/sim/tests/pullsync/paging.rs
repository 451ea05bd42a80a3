//! Pages: how their chunks are framed, and resuming from the recorded intervals.

use super::*;
use syncscope_proto::pullsync::{DeliveryMode, IntervalStore, MAX_MESSAGE_SIZE};

fn sync_frames(mode: DeliveryMode, n: usize) -> (Pair, Vec<usize>) {
    let (pair, chunks) = bin0_synced(Config::default().with_delivery(mode), n, 4096);
    assert_eq!(pair.delivered_addresses(), addresses(&chunks));
    // Full-chunk deliveries are about 4.3 kB, batches over 20 kB; the offer is about 12.5 kB.
    let is_delivery = |len: &usize| match mode {
        DeliveryMode::Streamed => (4200..5000).contains(len),
        DeliveryMode::Batched => *len > 20_000,
    };
    let frames = pair.server_frames().into_iter().filter(is_delivery).collect();
    (pair, frames)
}

#[test]
fn streamed_sends_one_delivery_per_message_batched_up_to_25() {
    let (streamed, frames) = sync_frames(DeliveryMode::Streamed, 120);
    assert_eq!(frames.len(), 120);
    let (batched, frames) = sync_frames(DeliveryMode::Batched, 120);
    assert_eq!(frames.len(), 5);
    assert!(frames.iter().all(|len| *len <= MAX_MESSAGE_SIZE));
    assert_eq!(
        streamed.client().puller_stats().chunks_delivered,
        batched.client().puller_stats().chunks_delivered
    );
}

/// A bin-0 pair whose puller restarts with `intervals` and `store`, and whose server restarts
/// with `reserve`.
fn restarted(intervals: MemoryIntervalStore, store: MemoryReserve, reserve: MemoryReserve) -> Pair {
    let client = bin0_client(Config::default(), intervals, store);
    Pair::build(&Config::default(), client, reserve, &[])
}

#[test]
fn restart_resumes_from_the_intervals_without_fetching_again() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 500, 128);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks[..300]);
    pair.connect();
    pair.drive();
    assert_eq!(pair.delivered().len(), 300);
    let intervals = pair.client().intervals().clone();
    let store = pair.client().reserve().clone();
    let reserve = pair.server().reserve().clone();
    let sent_before = pair.server().server_stats().chunks_sent;

    // A new puller (restart) with the same intervals and chunk store; the server got 200 more.
    let mut pair2 = restarted(intervals, store, reserve);
    pair2.add_to_reserve(&chunks[300..]);
    pair2.connect();
    pair2.drive();
    assert_eq!(pair2.delivered_addresses(), addresses(&chunks[300..]));
    // Nothing below 301 was even offered again.
    assert_eq!(pair2.client().puller_stats().chunks_offered, 200);
    assert_eq!(pair2.server().server_stats().chunks_sent, 200);
    assert_eq!(sent_before, 300);
}

#[test]
fn offered_chunks_already_stored_are_not_wanted() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 40, 64);
    let mut pair = bin0_pair(Config::default());
    pair.with_node(CLIENT, |node, _| {
        for c in &chunks[..25] {
            node.reserve_mut().put(c.clone());
        }
    });
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    assert_eq!(pair.client().puller_stats().chunks_offered, 40);
    assert_eq!(pair.client().puller_stats().chunks_wanted, 15);
    assert_eq!(pair.server().server_stats().chunks_sent, 15);
    assert_eq!(pair.client().reserve().len(), 40);
}

#[test]
fn epoch_change_resets_the_intervals() {
    let (pair, _) = bin0_synced(Config::default(), 30, 64);
    let mut intervals = pair.client().intervals().clone();
    intervals.reset_peer(&SERVER_OVERLAY, 6).unwrap();
    intervals.add(&SERVER_OVERLAY, 0, 1, 30).unwrap();
    // The server's epoch is 7, not 6: everything is offered again (and not wanted: we have it).
    let store = pair.client().reserve().clone();
    let mut pair2 = restarted(intervals, store, pair.server().reserve().clone());
    pair2.connect();
    pair2.drive();
    assert_eq!(pair2.client().puller_stats().chunks_offered, 30);
    assert_eq!(pair2.client().puller_stats().chunks_wanted, 0);
}

/// A bin-0 pair whose server holds 500 chunks, driven until the puller's first page of 100
/// has delivered its first chunk.
fn pulling_pages_of_100() -> (Pair, Vec<swarm::Chunk>) {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 500, 128);
    let mut pair = bin0_pair(Config::default().with_max_page(100));
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive_to(|p| !p.delivered().is_empty());
    (pair, chunks)
}

#[test]
fn a_paused_puller_finishes_its_pages_then_waits_and_resumes_where_it_stopped() {
    let (mut pair, chunks) = pulling_pages_of_100();
    pair.with_node(CLIENT, |node, now| node.set_paused(now, true));
    pair.drive();
    let while_paused = pair.delivered().len();
    assert!(while_paused < 500, "pulling stopped once its pages under way were done");
    assert_eq!(while_paused % 100, 0, "the page under way finished: {while_paused}");
    let later = pair.now() + Duration::from_secs(60);
    pair.drive_until(later);
    assert_eq!(pair.delivered().len(), while_paused, "nothing more while paused");

    pair.with_node(CLIENT, |node, now| node.set_paused(now, false));
    pair.drive();
    assert_eq!(pair.delivered_addresses(), addresses(&chunks), "every chunk once, in order");
    assert_eq!(pair.server().server_stats().chunks_sent, 500);
}

#[test]
fn a_puller_that_yields_cuts_its_page_short_and_resumes_without_fetching_a_chunk_twice() {
    let (mut pair, chunks) = pulling_pages_of_100();
    pair.with_node(CLIENT, |node, now| node.yield_now(now));
    let later = pair.now() + Duration::from_secs(60);
    pair.drive_until(later);
    let while_paused = pair.delivered().len();
    assert!(!while_paused.is_multiple_of(100), "the page under way was cut short: {while_paused}");
    // Bin 0's historical page and its live one, which waits for new chunks.
    assert_eq!(pair.client().puller_stats().pages_yielded, 2);

    pair.with_node(CLIENT, |node, now| node.set_paused(now, false));
    pair.drive();
    assert_eq!(pair.delivered_addresses(), addresses(&chunks), "every chunk once, in order");
    let stats = pair.client().puller_stats();
    // The cut first page is asked again from its start: the chunks it delivered are offered
    // and not wanted, the rest are wanted a second time.
    assert_eq!(stats.chunks_wanted, 500 + (100 - while_paused as u64));
    assert_eq!(stats.chunks_delivered, 500);
}
