//! Several servers offering the same chunks: each is delivered once, and none is lost.

use super::*;

/// The second server; its overlay ends in 3.
const SECOND: NodeId = NodeId(2);
/// The third server; its overlay ends in 4.
const THIRD: NodeId = NodeId(3);

/// A bin-0 puller, [`SERVER`] and a server per `more` (the last byte of its overlay and the
/// latency of its link).
fn bin0_room(more: &[(u8, Duration)]) -> Pair {
    let client = bin0_client(Config::default(), MemoryIntervalStore::default(), far_store());
    let more: Vec<_> =
        more.iter().map(|&(last, latency)| (server_overlay(last), latency)).collect();
    let reserve = MemoryReserve::new(SERVER_OVERLAY, 7);
    Pair::build(&Config::default(), client, reserve, &more)
}

/// [`bin0_room`] with SERVER and [`SECOND`] both holding `chunks`, connected.
fn two_servers_holding(chunks: &[swarm::Chunk]) -> Pair {
    let mut pair = bin0_room(&[(3, LATENCY)]);
    pair.add_to_reserve_of(SERVER, chunks);
    pair.add_to_reserve_of(SECOND, chunks);
    pair.connect_to(SERVER);
    pair.connect_to(SECOND);
    pair
}

fn assert_each_delivered_once(pair: &Pair, chunks: &[swarm::Chunk]) {
    let mut got = pair.delivered_addresses();
    got.sort();
    let mut expected = addresses(chunks);
    expected.sort();
    assert_eq!(got, expected, "every chunk delivered exactly once");
    assert_eq!(pair.client().reserve().len(), chunks.len());
    assert!(pair.misbehaved().is_empty());
}

fn bin0_ranges(pair: &Pair, server: NodeId) -> Option<Vec<(u64, u64)>> {
    let overlay = pair.overlay(server);
    pair.client().intervals().intervals(&overlay, 0).map(|i| i.ranges().to_vec())
}

fn chunks_sent(pair: &Pair) -> u64 {
    pair.servers().map(|s| pair.node(s).server_stats().chunks_sent).sum()
}

#[test]
fn two_servers_offering_the_same_chunks_deliver_each_chunk_once() {
    let chunks = chunks_in_bin(&mut rng(), 0, 600, 256);
    let mut pair = two_servers_holding(&chunks);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    let stats = pair.client().puller_stats();
    // Both offer every page at the same time: one page is wanted, the other skipped entirely.
    assert_eq!(
        (stats.chunks_offered, stats.chunks_wanted, stats.chunks_skipped_in_flight),
        (1200, 600, 600)
    );
    assert_eq!((stats.chunks_delivered, chunks_sent(&pair), stats.pages_refetched), (600, 600, 0));
    // Each peer's intervals are complete, though one of them delivered every chunk.
    assert_eq!(bin0_ranges(&pair, SERVER), Some(vec![(1, 600)]));
    assert_eq!(bin0_ranges(&pair, SECOND), Some(vec![(1, 600)]));
}

#[test]
fn three_servers_holding_the_chunks_in_different_orders_deliver_each_chunk_once() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 700, 256);
    let mut shuffled = chunks.clone();
    rand::seq::SliceRandom::shuffle(&mut shuffled[..], &mut rng);
    let reversed: Vec<swarm::Chunk> = chunks.iter().rev().cloned().collect();
    let mut pair = bin0_room(&[(3, LATENCY), (4, Duration::from_millis(7))]);
    pair.add_to_reserve_of(SERVER, &chunks);
    pair.add_to_reserve_of(SECOND, &reversed);
    pair.add_to_reserve_of(THIRD, &shuffled);
    for server in [SERVER, SECOND, THIRD] {
        pair.connect_to(server);
    }
    pair.drive();
    // Pages now mix chunks stored, wanted here and skipped for another page.
    assert_each_delivered_once(&pair, &chunks);
    let stats = pair.client().puller_stats();
    assert_eq!((stats.chunks_wanted, stats.chunks_delivered, chunks_sent(&pair)), (700, 700, 700));
    assert!(stats.chunks_skipped_in_flight > 0);
    for server in [SERVER, SECOND, THIRD] {
        assert_eq!(bin0_ranges(&pair, server), Some(vec![(1, 700)]), "intervals of {server:?}");
    }
}

#[test]
fn a_chunk_skipped_for_a_peer_that_then_fails_is_fetched_from_the_other() {
    for failure in [Failure::Disconnect, Failure::ResetStreams, Failure::DataLost] {
        let chunks = chunks_in_bin(&mut rng(), 0, 300, 256);
        let mut pair = two_servers_holding(&chunks);
        // SERVER's first page is wanted; SECOND's, offered just after, skips all of it and is
        // held. Then SERVER fails before delivering anything.
        pair.drive_to(|p| p.client().puller_stats().chunks_skipped_in_flight == 250);
        assert!(pair.delivered().is_empty());
        assert_eq!(bin0_ranges(&pair, SECOND), None, "the held page is not recorded");
        pair.fail_link(SERVER, failure);
        pair.drive();
        assert_each_delivered_once(&pair, &chunks);
        assert!(pair.delivered().iter().all(|d| d.2 == SECOND), "{failure:?}");
        let stats = pair.client().puller_stats();
        assert!(stats.pages_refetched >= 1, "{failure:?}");
        // Each failure is seen when it happens, not when a stream times out.
        assert_eq!(stats.timeouts, 0, "{failure:?}");
        assert_eq!(stats.chunks_delivered, 300);
        assert_eq!(bin0_ranges(&pair, SECOND), Some(vec![(1, 300)]), "{failure:?}");
        // A peer that stays connected ends complete too; one that left recorded nothing.
        let first = match failure {
            Failure::Disconnect => None,
            Failure::ResetStreams | Failure::DataLost => Some(vec![(1, 300)]),
        };
        assert_eq!(bin0_ranges(&pair, SERVER), first, "{failure:?}");
    }
}

#[test]
fn live_pages_of_two_servers_deliver_each_new_chunk_once() {
    let chunks = chunks_in_bin(&mut rng(), 0, 12, 256);
    let mut pair = bin0_room(&[(3, LATENCY)]);
    pair.connect_to(SERVER);
    pair.connect_to(SECOND);
    pair.drive();
    pair.drive_until(pair.now() + Duration::from_secs(5));
    pair.add_to_reserve_of(SERVER, &chunks);
    pair.add_to_reserve_of(SECOND, &chunks);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    assert_eq!(pair.client().puller_stats().chunks_skipped_in_flight, 12);
    assert_eq!(pair.synced(), [(0, 1, 12, true), (0, 1, 12, true)]);
}

#[test]
fn a_held_page_of_a_bin_that_stops_is_dropped_and_synced_again_when_it_restarts() {
    let chunks = chunks_in_bin(&mut rng(), 0, 300, 256);
    let mut pair = two_servers_holding(&chunks);
    pair.drive_to(|p| p.client().puller_stats().chunks_skipped_in_flight == 250);
    // Radius 5 is more than MAX_PO_DELTA above both peers: bin 0 stops everywhere.
    pair.set_storage_radius(5);
    let client = pair.client();
    assert!(client.syncing_bins(&SERVER).is_empty() && client.syncing_bins(&SECOND).is_empty());
    pair.drive();
    assert!(pair.delivered().is_empty());
    pair.set_storage_radius(1);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    assert_eq!(bin0_ranges(&pair, SERVER), Some(vec![(1, 300)]));
    assert_eq!(bin0_ranges(&pair, SECOND), Some(vec![(1, 300)]));
}
