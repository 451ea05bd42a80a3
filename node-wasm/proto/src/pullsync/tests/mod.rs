//! Tests that drive one sub-core by hand, a [`Puller`] or a [`Server`], with hand-written frames:
//! what each does with bad input. The tests of the two cores syncing as nodes, on the
//! simulator's network, are in `syncscope-sim` (`tests/pullsync`).

use super::*;
use crate::framing::encode_frame;
use crate::swarm::{self, Address, STAMP_SIZE};
use bytes::Bytes;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use web_time::Instant;

mod hostile;
mod server;

const SERVER: u8 = 1;
const CLIENT: u8 = 2;
const SERVER_OVERLAY: Address = Address([0; 32]);

fn client_overlay() -> Address {
    // Proximity 31 to the server: a neighbour that syncs every bin from the radius up.
    let mut a = [0; 32];
    a[31] = 1;
    Address(a)
}

/// Random chunks, each with its own stamp, that fall into `bin` of [`SERVER_OVERLAY`].
fn chunks_in_bin(rng: &mut ChaCha8Rng, bin: u8, n: usize, size: usize) -> Vec<swarm::Chunk> {
    crate::test_utils::chunks_in_bin(rng, SERVER_OVERLAY, bin, n, size)
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(7)
}

fn far() -> Address {
    let mut far = [0; 32];
    far[0] = 0x80;
    Address(far)
}

/// A puller at [`far`] with radius 1: the server is one below the radius and serves its own bin
/// (0) only.
fn bin0_puller(config: Config, intervals: MemoryIntervalStore) -> Puller<u8, MemoryIntervalStore> {
    let mut puller = Puller::new(config, far(), intervals);
    puller.set_storage_radius(Instant::now(), 1);
    puller
}
