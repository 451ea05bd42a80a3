//! Content import and export: files turned into content-addressed blocks and back, for both
//! protocols. Like `proto`, it is sans-IO: bytes go in, blocks or file bytes come out, and a
//! block the exporter needs is named, not fetched.
//!
//! - UnixFS (IPFS): [`UnixfsImporter`] builds kubo's and Helia's balanced DAG, byte for byte, so a
//!   file gets the CID `ipfs add --cid-version=1 --raw-leaves` gives it; [`UnixfsExporter`] walks
//!   a DAG back into the file, hashing every block; [`block_links`] lists a block's children for a
//!   fetcher that walks a DAG breadth-first.
//! - Swarm: [`SwarmSplitter`] builds bee's chunk tree, [`SwarmJoiner`] joins it back, verifying
//!   every chunk, and [`SwarmTree`] names the chunks of a stored tree. Chunks are the pull-sync
//!   [`Chunk`](syncscope_proto::swarm::Chunk).
//! - CAR: [`write_car`] and [`read_car`] move a DAG as one CARv1 file, as kubo and Helia do.
//! - [`demo_content`] and [`import_demo`]: the deterministic file that seed peers serve.

mod block;
mod car;
mod dag_pb;
mod demo;
mod swarm_join;
mod swarm_split;
mod swarm_tree;
mod unixfs_export;
mod unixfs_import;

pub use block::{block_links, verify_block, Block, BlockError, DAG_PB, RAW};
pub use car::{read_car, write_car, Car, CarError, MAX_SECTION};
pub use demo::{demo_content, demo_stamp, import_demo, DemoContent, DemoFile};
pub use swarm_join::{join_file, JoinError, SwarmJoiner};
pub use swarm_split::{split_bytes, SplitFile, SwarmSplitter, BRANCHES};
pub use swarm_tree::SwarmTree;
pub use unixfs_export::{
    check_stored_file, export_file, ExportError, ExportLimits, UnixfsExporter,
};
pub use unixfs_import::{
    import_bytes, ImportConfig, ImportError, ImportedFile, Leaves, UnixfsImporter,
    DEFAULT_CHUNK_SIZE, DEFAULT_MAX_LINKS, MAX_CHUNK_SIZE,
};
