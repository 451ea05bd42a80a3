//! Several servers offering the same chunks: each is delivered once, and none is lost.

use super::*;

/// A bin-0 puller and the first server plus servers `more`, all on links of the same latency.
fn bin0_room(more: &[u8]) -> Pair {
    let mut pair = bin0_pair(Config::default());
    for &peer in more {
        pair.add_server(peer, Config::default(), pair.latency);
    }
    pair
}

/// [`bin0_room`] with SERVER and peer 3 both holding `chunks`, connected.
fn two_servers_holding(chunks: &[swarm::Chunk]) -> Pair {
    let mut pair = bin0_room(&[3]);
    pair.add_to_reserve_of(SERVER, chunks);
    pair.add_to_reserve_of(3, chunks);
    pair.connect_to(SERVER);
    pair.connect_to(3);
    pair
}

fn assert_each_delivered_once(pair: &Pair, chunks: &[swarm::Chunk]) {
    let mut got = pair.delivered_addresses();
    got.sort();
    let mut expected: Vec<Address> = chunks.iter().map(|c| c.address()).collect();
    expected.sort();
    assert_eq!(got, expected, "every chunk delivered exactly once");
    assert_eq!(pair.store.len(), chunks.len());
    assert!(pair.pull_errors.is_empty() && pair.serve_errors.is_empty());
}

fn bin0_ranges(pair: &Pair, peer: u8) -> Option<Vec<(u64, u64)>> {
    let overlay = pair.servers[pair.route(peer)].overlay;
    pair.puller.store().intervals(&overlay, 0).map(|i| i.ranges().to_vec())
}

fn chunks_sent(pair: &Pair) -> u64 {
    pair.servers.iter().map(|s| s.server.stats().chunks_sent).sum()
}

#[test]
fn two_servers_offering_the_same_chunks_deliver_each_chunk_once() {
    let chunks = chunks_in_bin(&mut rng(), 0, 600, 256);
    let mut pair = two_servers_holding(&chunks);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    let stats = pair.puller.stats();
    // Both offer every page at the same time: one page is wanted, the other skipped entirely.
    assert_eq!(
        (stats.chunks_offered, stats.chunks_wanted, stats.chunks_skipped_in_flight),
        (1200, 600, 600)
    );
    assert_eq!((stats.chunks_delivered, chunks_sent(&pair), stats.pages_refetched), (600, 600, 0));
    // Each peer's intervals are complete, though one of them delivered every chunk.
    assert_eq!(bin0_ranges(&pair, SERVER), Some(vec![(1, 600)]));
    assert_eq!(bin0_ranges(&pair, 3), Some(vec![(1, 600)]));
}

#[test]
fn three_servers_holding_the_chunks_in_different_orders_deliver_each_chunk_once() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 700, 256);
    let mut shuffled = chunks.clone();
    rand::seq::SliceRandom::shuffle(&mut shuffled[..], &mut rng);
    let reversed: Vec<swarm::Chunk> = chunks.iter().rev().cloned().collect();
    let mut pair = bin0_room(&[3, 4]);
    pair.served(4).latency = Duration::from_millis(7);
    pair.add_to_reserve_of(SERVER, &chunks);
    pair.add_to_reserve_of(3, &reversed);
    pair.add_to_reserve_of(4, &shuffled);
    for peer in [SERVER, 3, 4] {
        pair.connect_to(peer);
    }
    pair.drive();
    // Pages now mix chunks stored, wanted here and skipped for another page.
    assert_each_delivered_once(&pair, &chunks);
    let stats = pair.puller.stats();
    assert_eq!((stats.chunks_wanted, stats.chunks_delivered, chunks_sent(&pair)), (700, 700, 700));
    assert!(stats.chunks_skipped_in_flight > 0);
    for peer in [SERVER, 3, 4] {
        assert_eq!(bin0_ranges(&pair, peer), Some(vec![(1, 700)]), "intervals of {peer}");
    }
}

#[test]
fn a_chunk_skipped_for_a_peer_that_then_fails_is_fetched_from_the_other() {
    for failure in [Failure::Disconnect, Failure::ResetStreams, Failure::DataLost] {
        let chunks = chunks_in_bin(&mut rng(), 0, 300, 256);
        let mut pair = two_servers_holding(&chunks);
        // SERVER's first page is wanted; peer 3's, offered just after, skips all of it and is
        // held. Then SERVER fails before delivering anything.
        pair.drive_to(|p| p.puller.stats().chunks_skipped_in_flight == 250);
        assert!(pair.delivered.is_empty());
        assert_eq!(bin0_ranges(&pair, 3), None, "the held page is not recorded");
        pair.fail_link(SERVER, failure);
        pair.drive();
        assert_each_delivered_once(&pair, &chunks);
        assert!(pair.delivered_by.iter().all(|&p| p == 3), "{failure:?}");
        let stats = pair.puller.stats();
        assert!(stats.pages_refetched >= 1, "{failure:?}");
        assert_eq!(stats.chunks_delivered, 300);
        assert_eq!(bin0_ranges(&pair, 3), Some(vec![(1, 300)]), "{failure:?}");
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
    let mut pair = bin0_room(&[3]);
    pair.connect_to(SERVER);
    pair.connect_to(3);
    pair.drive();
    pair.now += Duration::from_secs(5);
    pair.add_to_reserve_of(SERVER, &chunks);
    pair.add_to_reserve_of(3, &chunks);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    assert_eq!(pair.puller.stats().chunks_skipped_in_flight, 12);
    assert_eq!(pair.synced, vec![(0, 1, 12, true), (0, 1, 12, true)]);
}

#[test]
fn a_held_page_of_a_bin_that_stops_is_dropped_and_synced_again_when_it_restarts() {
    let chunks = chunks_in_bin(&mut rng(), 0, 300, 256);
    let mut pair = two_servers_holding(&chunks);
    pair.drive_to(|p| p.puller.stats().chunks_skipped_in_flight == 250);
    // Radius 5 is more than MAX_PO_DELTA above both peers: bin 0 stops everywhere.
    pair.puller.set_storage_radius(pair.now, 5);
    assert!(
        pair.puller.syncing_bins(&SERVER).is_empty() && pair.puller.syncing_bins(&3).is_empty()
    );
    pair.drive();
    assert!(pair.delivered.is_empty());
    pair.puller.set_storage_radius(pair.now, 1);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    assert_eq!(bin0_ranges(&pair, SERVER), Some(vec![(1, 300)]));
    assert_eq!(bin0_ranges(&pair, 3), Some(vec![(1, 300)]));
}
