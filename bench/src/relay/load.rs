//! A bounded, self-stopping load generator: each connection is a minimal libp2p peer of its own
//! (fresh identity, TCP + Noise + Yamux, identify and ping) that holds one connection to the
//! relay until the generator is dropped or its deadline passes.

use std::time::Duration;

use anyhow::{bail, Result};
use futures::StreamExt;
use libp2p::{
    identify, noise, ping, swarm::NetworkBehaviour, swarm::SwarmEvent, tcp, yamux, Multiaddr,
    SwarmBuilder,
};
use syncscope_node::node::IDENTIFY_PROTOCOL;
use tokio::sync::{mpsc, watch};

/// New connections opened per second, so that handshakes do not pile up in the relay's queue.
const DIAL_RATE: u32 = 1000;

#[derive(NetworkBehaviour)]
struct LoadPeer {
    identify: identify::Behaviour,
    ping: ping::Behaviour,
}

pub struct Load {
    stop: watch::Sender<bool>,
    open: usize,
}

impl Load {
    /// Starts with no connections; everything stops at `deadline` at the latest.
    pub fn new(deadline: Duration) -> Self {
        let (stop, _) = watch::channel(false);
        let timer = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(deadline).await;
            let _ = timer.send(true);
        });
        Self { stop, open: 0 }
    }

    pub fn open(&self) -> usize {
        self.open
    }

    /// Opens connections to `relay` until `target` are established.
    pub async fn grow_to(&mut self, relay: &Multiaddr, target: usize) -> Result<()> {
        let (ready_tx, mut ready) = mpsc::channel(1024);
        let pace = Duration::from_secs(1) / DIAL_RATE;
        for _ in self.open..target {
            tokio::spawn(hold(relay.clone(), self.stop.subscribe(), ready_tx.clone()));
            tokio::time::sleep(pace).await;
        }
        drop(ready_tx);
        let wanted = target - self.open;
        let mut failed = 0;
        for _ in 0..wanted {
            match ready.recv().await {
                Some(true) => self.open += 1,
                Some(false) => failed += 1,
                None => break,
            }
        }
        if failed > 0 || self.open < target {
            bail!("{failed} of {wanted} load connections failed; {} open", self.open);
        }
        Ok(())
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn hold(relay: Multiaddr, mut stop: watch::Receiver<bool>, ready: mpsc::Sender<bool>) {
    let Ok(builder) = SwarmBuilder::with_new_identity().with_tokio().with_tcp(
        tcp::Config::default().nodelay(true),
        noise::Config::new,
        yamux::Config::default,
    ) else {
        let _ = ready.send(false).await;
        return;
    };
    let Ok(builder) = builder.with_behaviour(|key| LoadPeer {
        identify: identify::Behaviour::new(identify::Config::new(
            IDENTIFY_PROTOCOL.into(),
            key.public(),
        )),
        ping: ping::Behaviour::new(ping::Config::new()),
    });
    let mut swarm = builder
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(3600)))
        .build();
    if swarm.dial(relay).is_err() {
        let _ = ready.send(false).await;
        return;
    }
    let mut reported = false;
    loop {
        tokio::select! {
            event = swarm.select_next_some() => match event {
                SwarmEvent::ConnectionEstablished { .. } if !reported => {
                    reported = true;
                    let _ = ready.send(true).await;
                }
                SwarmEvent::OutgoingConnectionError { .. } | SwarmEvent::ConnectionClosed { .. } if !reported => {
                    let _ = ready.send(false).await;
                    return;
                }
                _ => {}
            },
            _ = stop.changed() => return,
        }
    }
}
