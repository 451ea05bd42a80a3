//! The server as a node: answering for chunks that are gone.

use super::*;

#[test]
fn server_sends_the_zero_address_for_a_chunk_that_is_gone_and_the_puller_skips_it() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 3, 64);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks);
    // Evict the middle chunk from the data store but not the index: a race bee also has.
    pair.net.node_mut(SERVER).app.reserve.lose_chunk(chunks[1].address());
    pair.connect();
    pair.drive();
    assert_eq!(pair.delivered_addresses(), vec![chunks[0].address(), chunks[2].address()]);
    assert_eq!(pair.client().puller_stats().chunks_missing, 1);
    assert_eq!(pair.server().server_stats().chunks_missing, 1);
}
