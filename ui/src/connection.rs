//! The page's node and what it reports about its link to the relay, as signals.

use std::time::Duration;

use futures::StreamExt;
use leptos::prelude::*;
use syncscope_node::net::{self, NodeConfig, NodeEvent};

use crate::config;

#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Loading,
    Connecting,
    Connected,
    Failed(String),
}

/// Everything the connection panel shows.
#[derive(Clone, Copy)]
pub struct Connection {
    pub status: RwSignal<Status>,
    pub own_peer_id: RwSignal<Option<String>>,
    pub relay_peer_id: RwSignal<Option<String>>,
    pub transport: RwSignal<Option<&'static str>>,
    pub rtt: RwSignal<Option<Duration>>,
}

impl Connection {
    fn new() -> Self {
        Self {
            status: RwSignal::new(Status::Loading),
            own_peer_id: RwSignal::new(None),
            relay_peer_id: RwSignal::new(None),
            transport: RwSignal::new(None),
            rtt: RwSignal::new(None),
        }
    }
}

/// Starts the node and keeps the returned signals up to date.
pub fn start() -> Connection {
    let conn = Connection::new();
    leptos::task::spawn_local(async move {
        if let Err(e) = run(conn).await {
            tracing::error!("{e}");
            conn.status.set(Status::Failed(e));
        }
    });
    conn
}

async fn run(conn: Connection) -> Result<(), String> {
    let relay = config::fetch().await?.relay_address(&config::transports_from_url())?;
    conn.relay_peer_id.set(Some(relay.peer_id.to_string()));
    conn.status.set(Status::Connecting);
    let relay_peer = relay.peer_id;
    let mut node = net::start(NodeConfig::new(relay)).await.map_err(|e| e.to_string())?;
    conn.own_peer_id.set(Some(node.peer_id.to_string()));
    while let Some(event) = node.events.next().await {
        match event {
            NodeEvent::Connected { peer, transport, .. } if peer == relay_peer => {
                conn.transport.set(Some(transport.label()));
                conn.status.set(Status::Connected);
            }
            NodeEvent::Disconnected { peer, cause } if peer == relay_peer => {
                let why = cause.unwrap_or_else(|| "closed".into());
                conn.status.set(Status::Failed(format!("lost the relay connection: {why}")));
            }
            NodeEvent::DialFailed { error, .. } => {
                conn.status.set(Status::Failed(format!("cannot connect to the relay: {error}")));
            }
            NodeEvent::Ping { peer, rtt } if peer == relay_peer => conn.rtt.set(Some(rtt)),
            _ => {}
        }
    }
    Err("the node stopped".into())
}
