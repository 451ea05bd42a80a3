//! Pages: how their chunks are framed, and resuming from the recorded intervals.

use super::*;

fn sync_frames(mode: DeliveryMode, n: usize) -> (Pair, Vec<usize>) {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, n, 4096);
    let mut pair = bin0_pair(Config::default().with_delivery(mode));
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    assert_eq!(pair.delivered_addresses(), chunks.iter().map(|c| c.address()).collect::<Vec<_>>());
    // Full-chunk deliveries are about 4.3 kB, batches over 20 kB; the offer is about 12.5 kB.
    let is_delivery = |len: &usize| match mode {
        DeliveryMode::Streamed => (4200..5000).contains(len),
        DeliveryMode::Batched => *len > 20_000,
    };
    let frames = pair.server_frames.iter().copied().filter(is_delivery).collect();
    (pair, frames)
}

#[test]
fn streamed_sends_one_delivery_per_message_batched_up_to_25() {
    let (streamed, frames) = sync_frames(DeliveryMode::Streamed, 120);
    assert_eq!(frames.len(), 120);
    let (batched, frames) = sync_frames(DeliveryMode::Batched, 120);
    assert_eq!(frames.len(), 5);
    assert!(frames.iter().all(|len| *len <= MAX_MESSAGE_SIZE));
    assert_eq!(streamed.puller.stats().chunks_delivered, batched.puller.stats().chunks_delivered);
}

#[test]
fn restart_resumes_from_the_intervals_without_fetching_again() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 500, 128);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks[..300]);
    pair.connect();
    pair.drive();
    assert_eq!(pair.delivered.len(), 300);
    let intervals = pair.puller.store().clone();
    let store = pair.store.clone();
    let reserve = pair.reserve().clone();
    let sent_before = pair.server().stats().chunks_sent;

    // A new puller (restart) with the same intervals and chunk store; the server got 200 more.
    let mut pair2 = Pair::with_store(Config::default(), MemoryIntervalStore::default(), store);
    pair2.puller = bin0_puller(Config::default(), intervals);
    pair2.set_reserve(reserve);
    pair2.add_to_reserve(&chunks[300..]);
    pair2.connect();
    pair2.drive();
    let expected: Vec<Address> = chunks[300..].iter().map(|c| c.address()).collect();
    assert_eq!(pair2.delivered_addresses(), expected);
    // Nothing below 301 was even offered again.
    assert_eq!(pair2.puller.stats().chunks_offered, 200);
    assert_eq!(pair2.server().stats().chunks_sent, 200);
    assert_eq!(sent_before, 300);
}

#[test]
fn offered_chunks_already_stored_are_not_wanted() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 40, 64);
    let mut pair = bin0_pair(Config::default());
    for c in &chunks[..25] {
        pair.store.put(c.clone());
    }
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    assert_eq!(pair.puller.stats().chunks_offered, 40);
    assert_eq!(pair.puller.stats().chunks_wanted, 15);
    assert_eq!(pair.server().stats().chunks_sent, 15);
    assert_eq!(pair.store.len(), 40);
}

#[test]
fn epoch_change_resets_the_intervals() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 30, 64);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    let mut intervals = pair.puller.store().clone();
    intervals.reset_peer(&SERVER_OVERLAY, 6).unwrap();
    intervals.add(&SERVER_OVERLAY, 0, 1, 30).unwrap();
    // The server's epoch is 7, not 6: everything is offered again (and not wanted: we have it).
    let mut pair2 =
        Pair::with_store(Config::default(), MemoryIntervalStore::default(), pair.store.clone());
    pair2.puller = bin0_puller(Config::default(), intervals);
    pair2.set_reserve(pair.reserve().clone());
    pair2.connect();
    pair2.drive();
    assert_eq!(pair2.puller.stats().chunks_offered, 30);
    assert_eq!(pair2.puller.stats().chunks_wanted, 0);
}
