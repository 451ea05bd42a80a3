//! Content this page shares and fetches: what is being fetched and how far along it is, what was
//! fetched and how it went, and what this page serves.

use std::collections::BTreeSet;
use std::time::Duration;

use leptos::prelude::*;
use web_time::Instant;

use crate::per_frame::PerFrame;
use crate::timing;
use syncscope_node::net::PeerId;
use syncscope_node::node::{BlockSources, ContentAdded, FetchUpdate, NodeControl, RoomMember};
use syncscope_node::rt;

/// How long a fetch from a share link waits, after the first peer connected, for the rest of
/// the room's members: a fetch hands its first wants to the peers connected when it starts, and
/// seeds that connect later may get no share of them.
const LINK_FETCH_GATHER: Duration = Duration::from_secs(1);

/// ... but no longer than this after the last member got ready. Peers dialled together get ready
/// within tens of milliseconds of each other (10 to 35 ms in Chromium through a relay), while a
/// member that cannot be reached never does: a tab closed a moment ago is listed until the relay
/// notices (up to 10 s over WebRTC-direct), and every fetch from a link waited the whole second
/// for it.
const LINK_FETCH_QUIET: Duration = Duration::from_millis(250);

/// A fetch in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub root: String,
    pub blocks: u64,
    pub bytes: u64,
    /// Blocks known to be still missing.
    pub wanted: usize,
}

impl Progress {
    pub fn fraction(&self) -> f64 {
        let total = self.blocks + self.wanted as u64;
        if total == 0 {
            0.0
        } else {
            self.blocks as f64 / total as f64
        }
    }
}

/// How a finished fetch went.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub root: String,
    pub size: u64,
    pub blocks: u64,
    /// Blocks this page held already, which no peer sent.
    pub from_store: u64,
    pub elapsed: Duration,
    pub duplicate_blocks: u64,
    pub sources: BlockSources,
}

#[derive(Clone, Copy)]
pub struct Transfers {
    control: RwSignal<Option<NodeControl>, LocalStorage>,
    /// A CID the page should fetch once the room's peers are connected (from the share link).
    pub pending: RwSignal<Option<String>>,
    /// The name the pending CID's link gave it.
    pending_name: StoredValue<String>,
    /// The room's members, and the peers Bitswap can fetch from: the pending fetch starts once
    /// it can fetch from every member.
    members: StoredValue<BTreeSet<PeerId>>,
    connected: StoredValue<BTreeSet<PeerId>>,
    /// When the last peer got ready: the quiet wait restarts at each one.
    last_ready: StoredValue<Option<Instant>>,
    /// Files chosen before the node was running, shared once it is.
    waiting_shares: StoredValue<Vec<(String, Vec<u8>)>>,
    /// Redrawn at most once per frame: a fetch reports progress after every block.
    pub progress: PerFrame<Option<Progress>>,
    /// Whether the running fetch's first byte has arrived (marked for the benchmark).
    first_byte: StoredValue<bool>,
    pub outcome: RwSignal<Option<Outcome>>,
    pub shared: RwSignal<Vec<ContentAdded>>,
    pub error: RwSignal<Option<String>>,
}

impl Transfers {
    /// `pending`: a CID to fetch once a peer is there, listed under `name`.
    pub fn new(pending: Option<String>, name: Option<String>) -> Self {
        Self {
            control: RwSignal::new_local(None),
            pending: RwSignal::new(pending),
            pending_name: StoredValue::new(name.unwrap_or_default()),
            members: StoredValue::new(BTreeSet::new()),
            connected: StoredValue::new(BTreeSet::new()),
            last_ready: StoredValue::new(None),
            waiting_shares: StoredValue::new(Vec::new()),
            progress: PerFrame::new(None),
            first_byte: StoredValue::new(false),
            outcome: RwSignal::new(None),
            shared: RwSignal::new(Vec::new()),
            error: RwSignal::new(None),
        }
    }

    /// Starts fetching `root` (a CID as text), listed under `name` if it is not empty.
    pub fn fetch(&self, root: &str, name: &str) {
        let started = self.command(|control| {
            let cid = root.trim().parse().map_err(|e| format!("{root:?} is not a CID: {e}"))?;
            control.fetch_named(cid, name).map_err(|e| e.to_string())
        });
        if started {
            timing::mark("fetch-started");
            self.first_byte.set_value(false);
            self.outcome.set(None);
            let root = root.trim().to_string();
            self.progress.set(Some(Progress { root, blocks: 0, bytes: 0, wanted: 1 }));
        }
    }

    /// Dials any libp2p peer (a multiaddr as text ending in `/p2p/<id>`): a kubo or Helia node, or
    /// a syncscope peer outside the room. Bitswap then fetches from it and serves it.
    pub fn dial(&self, addr: &str) {
        self.command(|control| {
            let addr =
                addr.trim().parse().map_err(|e| format!("{addr:?} is not a multiaddr: {e}"))?;
            control.dial(addr).map_err(|e| e.to_string())
        });
    }

    /// Runs `run` on the node, showing its error in words; returns whether it succeeded.
    fn command(&self, run: impl FnOnce(&NodeControl) -> Result<(), String>) -> bool {
        let result = match self.control.get_untracked() {
            Some(control) => run(&control),
            None => Err("the node is not running yet".into()),
        };
        let ok = result.is_ok();
        self.error.set(result.err());
        ok
    }

    /// Imports and serves a file's bytes, as soon as the node runs.
    pub fn share(&self, name: String, data: Vec<u8>) {
        let Some(control) = self.control.get_untracked() else {
            self.waiting_shares.update_value(|waiting| waiting.push((name, data)));
            return;
        };
        if let Err(e) = control.add_bytes(&name, &data) {
            self.error.set(Some(e.to_string()));
        }
    }

    /// The node runs: commands go to `control`, starting with the files chosen meanwhile.
    pub fn node_started(&self, control: NodeControl) {
        self.control.set(Some(control));
        for (name, data) in self.waiting_shares.try_update_value(std::mem::take).unwrap_or_default()
        {
            self.share(name, data);
        }
    }

    /// Bitswap can (`ready`) or no longer can fetch from `peer`. A fetch waiting for peers
    /// starts once every room member is ready, [`LINK_FETCH_QUIET`] after the last one got ready,
    /// or [`LINK_FETCH_GATHER`] after the first one.
    pub fn bitswap_peer(&self, peer: PeerId, ready: bool) {
        if !ready {
            self.connected.update_value(|c| {
                c.remove(&peer);
            });
            return;
        }
        let first = self.connected.try_update_value(|c| c.insert(peer).then_some(c.len() == 1));
        let Some(Some(first)) = first else { return };
        let now = Some(Instant::now());
        self.last_ready.set_value(now);
        if self.pending.get_untracked().is_some() {
            // Still quiet if no other peer got ready since this one.
            self.start_pending_after(LINK_FETCH_QUIET, move |this| {
                this.last_ready.get_value() == now
            });
            if first {
                self.start_pending_after(LINK_FETCH_GATHER, |_| true);
            }
        }
        self.start_pending_if_gathered();
    }

    /// Starts the pending fetch after `wait`, if `still` holds then.
    fn start_pending_after(&self, wait: Duration, still: impl Fn(&Self) -> bool + 'static) {
        let this = *self;
        leptos::task::spawn_local(async move {
            rt::sleep(wait).await;
            if still(&this) {
                this.start_pending();
            }
        });
    }

    pub fn room_members(&self, members: &[RoomMember]) {
        self.members.set_value(members.iter().map(|m| m.peer).collect());
        self.start_pending_if_gathered();
    }

    fn start_pending_if_gathered(&self) {
        let connected = self.connected.get_value();
        let members = self.members.get_value();
        if !connected.is_empty() && members.is_subset(&connected) {
            self.start_pending();
        }
    }

    fn start_pending(&self) {
        if let Some(root) = self.pending.get_untracked() {
            self.pending.set(None);
            self.fetch(&root, &self.pending_name.get_value());
        }
    }

    pub fn on_added(&self, added: ContentAdded) {
        self.shared.update(|s| s.push(added));
    }

    pub fn on_fetch(&self, update: FetchUpdate) {
        match update {
            FetchUpdate::Progress { root, blocks, bytes, wanted } => {
                if bytes > 0 && !self.first_byte.get_value() {
                    self.first_byte.set_value(true);
                    timing::mark("fetch-first-byte");
                }
                let progress = Progress { root: root.to_string(), blocks, bytes, wanted };
                self.progress.set_next_frame(Some(progress));
            }
            FetchUpdate::Done {
                root,
                size,
                blocks,
                from_store,
                elapsed,
                sources,
                duplicate_blocks,
            } => {
                self.progress.set(None);
                self.outcome.set(Some(Outcome {
                    root: root.to_string(),
                    size,
                    blocks,
                    from_store,
                    elapsed,
                    duplicate_blocks,
                    sources,
                }));
            }
            FetchUpdate::Failed { root, error } => {
                self.progress.set(None);
                self.error.set(Some(format!("fetching {root} failed: {error}")));
            }
        }
    }
}
