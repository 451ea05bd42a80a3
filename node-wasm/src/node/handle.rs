//! A running node: the swarm driven by a task of its own ([`super::driver`]), steered with
//! commands through a [`NodeHandle`] and observed through [`NodeEvent`]s.

use bytes::Bytes;
use cid::Cid;
use futures::channel::mpsc;
use libp2p::{swarm::DialError, Multiaddr, PeerId};

use super::config::NodeConfig;
use super::driver::{relay_dial_opts, Command, Driver};
use super::events::NodeEvent;
use super::transport::{build_swarm, BuildError};
use crate::content::{
    demo_stamp, import_bytes, read_car, split_bytes, CarError, ImportConfig, ImportError,
    ImportedFile, SplitFile,
};
use crate::net::link_probe::{self, LinkMeasurement, ProbeError};
use crate::net::pullsync;
use crate::rt;
use crate::store::{BlockStore, Manifest, PullsyncState, StoreError};

/// Events are dropped, not queued without bound, when the observer falls this far behind.
const EVENT_QUEUE: usize = 1024;
const COMMAND_QUEUE: usize = 64;

/// The caller's side of a running node: its events, and (through `Deref`) its
/// [`NodeControl`]. Dropping it (or its `events`) stops the node.
pub struct NodeHandle {
    pub peer_id: PeerId,
    /// What the store held when the node started, all of it served from the start.
    pub stored: StoredBlocks,
    /// The roots it held, whole or in part; [`NodeEvent::Stored`] reports changes.
    pub content: Vec<Manifest>,
    pub events: mpsc::Receiver<NodeEvent>,
    pub control: NodeControl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoredBlocks {
    pub blocks: usize,
    pub bytes: u64,
    /// Pull-sync chunks in the reserve.
    pub chunks: usize,
}

impl std::ops::Deref for NodeHandle {
    type Target = NodeControl;

    fn deref(&self) -> &NodeControl {
        &self.control
    }
}

/// Commands for a running node. Cheap to clone, so that every part of an application (a button,
/// a timer) can hold one.
#[derive(Clone)]
pub struct NodeControl {
    commands: mpsc::Sender<Command>,
    link_probe: libp2p_stream::Control,
}

/// Why a command did not reach the node.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    #[error("the node is not running or is overloaded with commands")]
    Stopped,
    #[error("cannot import the content: {0}")]
    Import(#[from] ImportError),
    #[error("cannot import the CAR: {0}")]
    Car(#[from] CarError),
}

impl NodeControl {
    /// Joins `room`; [`NodeEvent::Room`] then reports its members as they change.
    pub fn join_room(&self, room: &str) -> Result<(), CommandError> {
        self.send(Command::JoinRoom(room.to_string()))
    }

    pub fn leave_room(&self, room: &str) -> Result<(), CommandError> {
        self.send(Command::LeaveRoom(room.to_string()))
    }

    /// Dials a peer, e.g. a room member's circuit address.
    pub fn dial(&self, addr: Multiaddr) -> Result<(), CommandError> {
        self.send(Command::Dial(addr))
    }

    /// Imports `data` as a UnixFS file (kubo's `--cid-version=1 --raw-leaves` layout) and as
    /// Swarm chunks, then serves it over Bitswap and pull-sync. The import runs on the caller's
    /// thread; [`NodeEvent::ContentAdded`] follows.
    pub fn add_bytes(&self, name: &str, data: &[u8]) -> Result<(), CommandError> {
        self.add_bytes_with(name, data, ImportConfig::default())
    }

    /// [`Self::add_bytes`] with other UnixFS settings, e.g. to match what another implementation
    /// imported the same bytes with.
    pub fn add_bytes_with(
        &self,
        name: &str,
        data: &[u8],
        unixfs: ImportConfig,
    ) -> Result<(), CommandError> {
        let unixfs = import_bytes(data, unixfs)?;
        // syncscope carries postage stamps opaquely and issues none; local uploads carry a fixed
        // placeholder.
        let swarm = split_bytes(data, demo_stamp(0));
        self.add_imported(name, unixfs, swarm)
    }

    /// Serves content imported already, e.g. by [`crate::content::import_demo`], under `name`.
    pub fn add_imported(
        &self,
        name: &str,
        unixfs: ImportedFile,
        swarm: SplitFile,
    ) -> Result<(), CommandError> {
        self.send(Command::Add(Box::new((name.to_owned(), unixfs, swarm))))
    }

    /// Imports a CARv1 file (kubo's `ipfs dag export`, Helia's `@helia/car`): every block is
    /// verified against its CID here, on the caller's thread, then stored and served, and each
    /// root is listed under `name` as a fetch that the store answers. A CAR that lacks some of a
    /// root's blocks leaves that fetch asking the network for them. Returns the CAR's roots.
    pub fn import_car(&self, data: Bytes, name: &str) -> Result<Vec<Cid>, CommandError> {
        let car = read_car(&data)?;
        let roots = car.roots.clone();
        self.send(Command::ImportCar(Box::new(car), name.to_owned()))?;
        Ok(roots)
    }

    /// Writes the DAG at `root`, as the store holds it, into a CARv1 file;
    /// [`super::StoredChange::Car`] brings it.
    pub fn export_car(&self, root: Cid) -> Result<(), CommandError> {
        self.send(Command::ExportCar(root))
    }

    /// Forgets `root`: it leaves the node's list of content. Its blocks stay in the store.
    pub fn remove(&self, root: Cid) -> Result<(), CommandError> {
        self.send(Command::Remove(root))
    }

    /// Reads the file at `root` back from the store, verified; [`super::StoredChange::Read`] brings
    /// it.
    pub fn read_file(&self, root: Cid) -> Result<(), CommandError> {
        self.send(Command::ReadFile(root))
    }

    /// Fetches the UnixFS file at `root` over Bitswap; [`NodeEvent::Fetch`] reports progress.
    pub fn fetch(&self, root: Cid) -> Result<(), CommandError> {
        self.fetch_named(root, "")
    }

    /// [`Self::fetch`], listing the root under `name` (from a share link, say) among what the
    /// node holds, unless it is listed already.
    pub fn fetch_named(&self, root: Cid, name: &str) -> Result<(), CommandError> {
        self.send(Command::Fetch(root, name.to_owned()))
    }

    /// Measures the raw link to a connected `peer`: `bytes` bytes over the link probe, with
    /// nothing but libp2p's own layers on the way ([`link_probe`]). Pull-sync pauses meanwhile,
    /// as for a fetch ([`crate::node::ProtocolSettings::pullsync_yields`]).
    pub async fn measure_link(
        &self,
        peer: PeerId,
        bytes: u64,
    ) -> Result<LinkMeasurement, ProbeError> {
        // A stopped node cannot take the notes; the probe then fails on its own.
        let _ = self.send(Command::Probing(true));
        let measured = link_probe::measure(&mut self.link_probe.clone(), peer, bytes).await;
        let _ = self.send(Command::Probing(false));
        measured
    }

    fn send(&self, command: Command) -> Result<(), CommandError> {
        self.commands.clone().try_send(command).map_err(|_| CommandError::Stopped)
    }
}

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("cannot dial the relay: {0}")]
    Dial(#[source] DialError),
    #[error("cannot listen on {addr}: {error}")]
    Listen { addr: Multiaddr, error: libp2p::TransportError<std::io::Error> },
    #[error("cannot read what the store holds: {0}")]
    Store(#[from] StoreError),
}

/// Builds the swarm, dials the relay and spawns the task that drives it.
pub async fn start(config: NodeConfig) -> Result<NodeHandle, StartError> {
    let peer_id = config.keypair.public().to_peer_id();
    let inventory = config.blocks.inventory().await?;
    let content = config.blocks.manifests().await?;
    let now = web_time::SystemTime::now().duration_since(web_time::UNIX_EPOCH);
    let overlay = pullsync::overlay_of(&peer_id);
    let pullsync_state =
        PullsyncState::load(config.blocks.clone(), overlay, now.map_or(0, |d| d.as_secs())).await?;
    let stored = StoredBlocks {
        blocks: inventory.len(),
        bytes: inventory.iter().map(|(_, size)| *size as u64).sum(),
        chunks: pullsync_state.reserve.len(),
    };
    tracing::info!(
        blocks = stored.blocks,
        bytes = stored.bytes,
        chunks = stored.chunks,
        "indexed the blocks already stored"
    );
    let mut swarm = build_swarm(&config, pullsync_state).await?;
    swarm.behaviour_mut().bitswap.index_stored(inventory);
    let mut link_probe = swarm.behaviour().streams.new_control();
    if let Ok(incoming) = link_probe.accept(link_probe::PROTOCOL) {
        rt::spawn(link_probe::serve(incoming));
    }
    let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
    let (commands_tx, commands) = mpsc::channel(COMMAND_QUEUE);
    if let Some(relay) = &config.relay {
        swarm.dial(relay_dial_opts(relay)).map_err(StartError::Dial)?;
    }
    for addr in &config.listen {
        let listen = swarm.listen_on(addr.clone());
        listen.map_err(|error| StartError::Listen { addr: addr.clone(), error })?;
    }
    let driver = Driver::new(swarm, &config, content.clone(), events_tx);
    rt::spawn(driver.run(commands));
    let control = NodeControl { commands: commands_tx, link_probe };
    Ok(NodeHandle { peer_id, stored, content, events, control })
}
