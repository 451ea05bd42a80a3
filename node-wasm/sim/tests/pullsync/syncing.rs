//! Which bins are synced from whom, and historical and live syncing of a bin.

use super::*;

#[test]
fn historical_sync_of_a_bin_fetches_every_chunk_once_in_order() {
    let (pair, chunks) = bin0_synced(Config::default(), 600, 4096);
    assert_eq!(pair.client().syncing_bins(&SERVER), vec![0]);
    assert_eq!(pair.delivered_addresses(), addresses(&chunks));
    assert!(pair.misbehaved().is_empty());
    // Pages of 250, 250 and 100, recorded as one interval.
    let historical: Vec<_> = pair.synced().iter().filter(|s| !s.3).collect();
    assert_eq!(historical, vec![&(0, 1, 250, false), &(0, 251, 500, false), &(0, 501, 600, false)]);
    let stats = pair.client().puller_stats();
    assert_eq!(
        (stats.chunks_offered, stats.chunks_wanted, stats.chunks_delivered),
        (600, 600, 600)
    );
    assert_eq!(pair.server().server_stats().chunks_sent, 600);
    let intervals = pair.client().intervals().intervals(&SERVER_OVERLAY, 0).unwrap();
    assert_eq!(intervals.ranges(), &[(1, 600)]);
}

#[test]
fn neighbour_syncs_every_bin_from_the_radius_up() {
    let mut rng = rng();
    let mut pair = Pair::new(Config::default());
    let low = chunks_in_bin(&mut rng, 0, 20, 64);
    let high = chunks_in_bin(&mut rng, 2, 5, 64);
    pair.add_to_reserve(&low);
    pair.add_to_reserve(&high);
    pair.set_storage_radius(1);
    pair.connect();
    pair.drive();
    assert_eq!(pair.client().syncing_bins(&SERVER), (1..32).collect::<Vec<u8>>());
    // The client's own radius also filters: bin-0 chunks are outside it and never wanted.
    assert_eq!(pair.delivered_addresses(), addresses(&high));
}

#[test]
fn a_peer_below_the_radius_serves_only_its_own_bin_and_too_far_serves_none() {
    let mut overlay = [0u8; 32];
    overlay[0] = 0b0010_0000; // proximity 2 to the client overlay
    let too_far = NodeId(2);
    let mut pair = Pair::new_with(Config::default(), &[(Address(overlay), LATENCY)]);
    pair.set_storage_radius(5);
    pair.connect_to(too_far);
    pair.connect();
    pair.drive();
    assert_eq!(pair.client().syncing_bins(&too_far), Vec::<u8>::new());
    let mut pair = Pair::new(Config::default());
    pair.set_storage_radius(3);
    // Proximity 2 with radius 3: within MAX_PO_DELTA, so only bin 2. SERVER is told it is at
    // that overlay; its reserve is empty, so check the choice once the cursors arrived.
    pair.connect_as(SERVER, Address(overlay));
    pair.drive();
    assert_eq!(pair.client().syncing_bins(&SERVER), vec![2]);
}

#[test]
fn live_sync_long_polls_and_closes_the_page_after_the_quiet_period() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 12, 256);
    let mut pair = bin0_pair(Config::default());
    pair.connect();
    pair.drive();
    assert!(pair.delivered().is_empty());
    // Nothing to offer: the live Get waits on the server with no timer running.
    assert_eq!(pair.server().server().poll_timeout(), None);
    let t0 = pair.now() + Duration::from_secs(5);
    pair.drive_until(t0);
    pair.add_to_reserve(&chunks[..4]);
    pair.drive_until(t0 + Duration::from_millis(500));
    pair.add_to_reserve(&chunks[4..]);
    pair.drive();
    // One page for all twelve: it closed 1 s after the last arrival, not after the first.
    assert_eq!(pair.synced(), [(0, 1, 12, true)]);
    let first = pair.delivered()[0].0;
    let offered_at = first - LATENCY * 3;
    assert_eq!(offered_at, t0 + Duration::from_millis(500) + Duration::from_secs(1));
    assert_eq!(pair.delivered().len(), 12);
}
