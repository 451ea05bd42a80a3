//! Swarm's data model, as ethersphere/bee defines it: 32-byte addresses shared by chunks and
//! nodes (overlays), proximity order and bins, content-addressed chunks hashed with the binary
//! Merkle tree (BMT), and postage stamps carried opaquely.

mod address;
mod bmt;
mod chunk;
mod keccak;
mod stamp;

pub use address::{Address, AddressError, ADDRESS_SIZE, MAX_BINS, MAX_PO};
pub use bmt::{bmt_root, chunk_address, CHUNK_SIZE};
pub use chunk::{Chunk, ChunkError, ChunkRef, SPAN_SIZE};
pub use keccak::{keccak256, keccak256_pairs, keccak256_pairs_scalar, simd_path};
pub use stamp::{Stamp, StampError, STAMP_SIZE};
