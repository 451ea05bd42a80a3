//! The relay's side of rooms: who is in which room, and the member lists it publishes.
//!
//! A peer is listed in a room while it is subscribed to the room's topic and holds a reservation
//! (without one it cannot be dialled through the relay). See `syncscope_proto::rooms`.

use std::collections::{hash_map::Entry, BTreeMap, BTreeSet, HashMap};

use libp2p::{multiaddr::Protocol, Multiaddr, PeerId};
use syncscope_proto::rooms::{room_of, Member, RoomMembers};

#[derive(Debug, Default)]
pub struct Rooms {
    subscribed: BTreeMap<String, BTreeSet<PeerId>>,
    /// Reservations held per peer: one per connection that made one, so that a peer holding two
    /// stays listed when one of them ends.
    reserved: HashMap<PeerId, u32>,
    agents: HashMap<PeerId, String>,
    seq: u64,
}

impl Rooms {
    /// A peer subscribed to `topic`; returns the room if its listing changed.
    pub fn subscribed(&mut self, peer: PeerId, topic: &str) -> Option<String> {
        let room = room_of(topic)?;
        let added = self.subscribed.entry(room.to_string()).or_default().insert(peer);
        (added && self.reserved.contains_key(&peer)).then(|| room.to_string())
    }

    pub fn unsubscribed(&mut self, peer: PeerId, topic: &str) -> Option<String> {
        let room = room_of(topic)?;
        let members = self.subscribed.get_mut(room)?;
        let removed = members.remove(&peer);
        if members.is_empty() {
            self.subscribed.remove(room);
        }
        (removed && self.reserved.contains_key(&peer)).then(|| room.to_string())
    }

    /// The peer now holds (or no longer holds) a reservation; returns the rooms whose listing
    /// changed.
    pub fn reservation(&mut self, peer: PeerId, held: bool) -> Vec<String> {
        let changed = match (self.reserved.entry(peer), held) {
            (Entry::Vacant(e), true) => {
                e.insert(1);
                true
            }
            (Entry::Occupied(mut e), true) => {
                *e.get_mut() += 1;
                false
            }
            (Entry::Occupied(mut e), false) => {
                *e.get_mut() -= 1;
                let last = *e.get() == 0;
                if last {
                    e.remove();
                }
                last
            }
            (Entry::Vacant(_), false) => false,
        };
        if changed {
            self.rooms_of(peer)
        } else {
            Vec::new()
        }
    }

    /// The peer's last connection closed: it leaves every room.
    pub fn disconnected(&mut self, peer: PeerId) -> Vec<String> {
        let listed =
            if self.reserved.remove(&peer).is_some() { self.rooms_of(peer) } else { Vec::new() };
        self.subscribed.retain(|_, members| {
            members.remove(&peer);
            !members.is_empty()
        });
        self.agents.remove(&peer);
        listed
    }

    /// Records what software the peer runs; returns the rooms whose listing now shows it.
    pub fn set_agent(&mut self, peer: PeerId, agent: String) -> Vec<String> {
        let changed = self.agents.insert(peer, agent.clone()) != Some(agent);
        if changed && self.reserved.contains_key(&peer) {
            self.rooms_of(peer)
        } else {
            Vec::new()
        }
    }

    fn rooms_of(&self, peer: PeerId) -> Vec<String> {
        self.subscribed.iter().filter(|(_, m)| m.contains(&peer)).map(|(r, _)| r.clone()).collect()
    }

    /// Rooms with at least one subscriber.
    pub fn rooms(&self) -> impl Iterator<Item = &str> {
        self.subscribed.keys().map(String::as_str)
    }

    /// The next list to publish for `room`, with each member's circuit address through every
    /// one of `relay_addrs` (dialable relay addresses ending in `/p2p/<relay>`).
    pub fn list(&mut self, room: &str, relay_addrs: &[Multiaddr]) -> RoomMembers {
        self.seq += 1;
        let members = self
            .subscribed
            .get(room)
            .into_iter()
            .flatten()
            .filter(|p| self.reserved.contains_key(p))
            .map(|peer| Member {
                peer_id: peer.to_bytes(),
                addrs: relay_addrs.iter().map(|a| circuit_addr(a, *peer).to_vec()).collect(),
                agent: self.agents.get(peer).cloned().unwrap_or_default(),
            })
            .collect();
        RoomMembers { room: room.to_string(), seq: self.seq, members }
    }
}

fn circuit_addr(relay: &Multiaddr, peer: PeerId) -> Multiaddr {
    relay.clone().with(Protocol::P2pCircuit).with(Protocol::P2p(peer))
}

#[cfg(test)]
mod tests {
    use syncscope_proto::rooms::topic_of;

    use super::*;

    #[test]
    fn members_are_listed_once_subscribed_and_reserved() {
        let mut rooms = Rooms::default();
        let (a, topic) = (PeerId::random(), topic_of("lab").unwrap());
        assert_eq!(rooms.subscribed(a, &topic), None);
        assert_eq!(rooms.reservation(a, true), vec!["lab".to_string()]);
        let relay: Multiaddr =
            format!("/ip4/127.0.0.1/tcp/1/p2p/{}", PeerId::random()).parse().unwrap();
        let list = rooms.list("lab", std::slice::from_ref(&relay));
        assert_eq!(list.members.len(), 1);
        let addr = Multiaddr::try_from(list.members[0].addrs[0].clone()).unwrap();
        assert_eq!(addr, circuit_addr(&relay, a));
    }

    #[test]
    fn a_disconnected_peer_leaves_every_room() {
        let mut rooms = Rooms::default();
        let a = PeerId::random();
        rooms.reservation(a, true);
        rooms.subscribed(a, &topic_of("x").unwrap());
        rooms.subscribed(a, &topic_of("y").unwrap());
        assert_eq!(rooms.disconnected(a), vec!["x".to_string(), "y".to_string()]);
        assert_eq!(rooms.rooms().count(), 0);
    }

    #[test]
    fn a_peer_with_two_reservations_stays_listed_until_both_end() {
        let mut rooms = Rooms::default();
        let a = PeerId::random();
        rooms.subscribed(a, &topic_of("lab").unwrap());
        assert_eq!(rooms.reservation(a, true), vec!["lab".to_string()]);
        assert!(rooms.reservation(a, true).is_empty());
        assert!(rooms.reservation(a, false).is_empty());
        assert_eq!(rooms.list("lab", &[]).members.len(), 1);
        assert_eq!(rooms.reservation(a, false), vec!["lab".to_string()]);
        assert!(rooms.list("lab", &[]).members.is_empty());
        assert!(rooms.reservation(a, false).is_empty(), "an unknown end changes nothing");
    }

    #[test]
    fn lists_carry_increasing_sequence_numbers() {
        let mut rooms = Rooms::default();
        let first = rooms.list("lab", &[]).seq;
        assert!(rooms.list("lab", &[]).seq > first);
    }
}
