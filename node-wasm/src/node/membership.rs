//! The member side of rooms: subscribing, checking that lists come from the relay, and turning
//! them into joins and leaves.

use std::collections::BTreeMap;

use libp2p::{
    gossipsub::{self, IdentTopic, MessageAcceptance},
    multiaddr::Protocol,
    Multiaddr, PeerId,
};

use crate::agent::PeerKind;
use crate::net::RoomsBehaviour;
use syncscope_proto::rooms::{room_of, topic_of, Member, RoomChange, RoomError, RoomView};

/// A peer in a room, as the relay lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomMember {
    pub peer: PeerId,
    /// Circuit addresses through the relay; the first goes through the same relay transport this
    /// node uses.
    pub addrs: Vec<Multiaddr>,
    /// Its identify agent string, as the relay saw it.
    pub agent: String,
    /// What it runs, read off `agent`.
    pub kind: PeerKind,
}

/// What changed in a room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomUpdate {
    pub room: String,
    pub joined: Vec<RoomMember>,
    pub left: Vec<PeerId>,
    pub members: Vec<RoomMember>,
}

/// The rooms this node is in.
pub struct Membership {
    me: PeerId,
    /// The relay whose lists count; none without a relay.
    relay: Option<PeerId>,
    views: BTreeMap<String, RoomView>,
}

impl Membership {
    pub fn new(me: PeerId, relay: Option<PeerId>) -> Self {
        Self { me, relay, views: BTreeMap::new() }
    }

    pub fn join(&mut self, gossip: &mut RoomsBehaviour, room: &str) -> Result<(), RoomError> {
        let topic = topic_of(room)?;
        if gossip.subscribe(&IdentTopic::new(topic)).is_ok() {
            self.views.entry(room.to_string()).or_insert_with(|| RoomView::new(room));
        }
        Ok(())
    }

    pub fn leave(&mut self, gossip: &mut RoomsBehaviour, room: &str) {
        if let Ok(topic) = topic_of(room) {
            gossip.unsubscribe(&IdentTopic::new(topic));
        }
        self.views.remove(room);
    }

    /// `peer` as a member of one of this node's rooms, if it is one.
    pub fn member(&self, peer: PeerId, relay_addr: Option<&Multiaddr>) -> Option<RoomMember> {
        let id = peer.to_bytes();
        let found = self.views.values().flat_map(RoomView::members).find(|m| m.peer_id == id)?;
        member(found, relay_addr)
    }

    /// The relay's lists die with the connection to it: every room starts empty again, and its
    /// next list, from the relay dialled anew, counts every member as joined (to be dialled
    /// again, as their circuits went with the relay). Returns each room's leaves.
    pub fn relay_lost(&mut self) -> Vec<RoomUpdate> {
        let mut updates = Vec::new();
        for view in self.views.values_mut() {
            let left: Vec<PeerId> =
                view.members().filter_map(|m| PeerId::from_bytes(&m.peer_id).ok()).collect();
            *view = RoomView::new(view.name());
            if !left.is_empty() {
                let room = view.name().to_string();
                updates.push(RoomUpdate { room, joined: vec![], left, members: vec![] });
            }
        }
        updates
    }

    /// Handles a rooms message: accepted only from the relay, on a room this node is in.
    pub fn handle(
        &mut self,
        gossip: &mut RoomsBehaviour,
        source: PeerId,
        id: gossipsub::MessageId,
        message: gossipsub::Message,
        relay_addr: Option<&Multiaddr>,
    ) -> Option<Result<RoomUpdate, RoomError>> {
        let from_relay = self.relay.is_some() && message.source == self.relay;
        let view = room_of(message.topic.as_str()).and_then(|r| self.views.get_mut(r));
        let verdict = if from_relay && view.is_some() {
            MessageAcceptance::Accept
        } else {
            MessageAcceptance::Reject
        };
        gossip.report_message_validation_result(&id, &source, verdict);
        let view = view.filter(|_| from_relay)?;
        let first = !view.has_list();
        match view.apply(&message.data, &self.me.to_bytes()) {
            // The relay republishes unchanged lists; only the first and real changes matter.
            Ok(changes) if changes.is_empty() && !first => None,
            result => Some(result.map(|changes| update(view, changes, relay_addr))),
        }
    }
}

fn update(view: &RoomView, changes: Vec<RoomChange>, relay_addr: Option<&Multiaddr>) -> RoomUpdate {
    let mut out =
        RoomUpdate { room: view.name().to_string(), joined: vec![], left: vec![], members: vec![] };
    for change in changes {
        match change {
            RoomChange::Joined(m) => out.joined.extend(member(&m, relay_addr)),
            RoomChange::Left(id) => out.left.extend(PeerId::from_bytes(&id).ok()),
        }
    }
    out.members = view.members().filter_map(|m| member(m, relay_addr)).collect();
    out
}

/// The address up to its first `/p2p`: how the relay is reached.
fn transport_part(addr: &Multiaddr) -> Multiaddr {
    addr.iter().take_while(|p| !matches!(p, Protocol::P2p(_))).collect()
}

fn member(m: &Member, relay_addr: Option<&Multiaddr>) -> Option<RoomMember> {
    let peer = PeerId::from_bytes(&m.peer_id).ok()?;
    let mut addrs: Vec<Multiaddr> =
        m.addrs.iter().filter_map(|a| Multiaddr::try_from(a.clone()).ok()).collect();
    if let Some(relay) = relay_addr.map(transport_part) {
        addrs.sort_by_key(|a| transport_part(a) != relay);
    }
    Some(RoomMember { peer, addrs, agent: m.agent.clone(), kind: PeerKind::of_agent(&m.agent) })
}
