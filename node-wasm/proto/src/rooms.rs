//! Rooms: how peers find each other through the relay.
//!
//! A room is a gossipsub topic, `/syncscope/room/1/<name>`. Members subscribe to it; the relay,
//! which sees every subscription and every disconnection, publishes the authoritative member list
//! ([`RoomMembers`]) on the topic whenever it changes and every few seconds. Members accept lists
//! only from the relay they joined through, so a member cannot forge another's presence, and a
//! member that leaves (or whose tab closes) is gone from every list as soon as the relay notices.
//!
//! [`RoomView`] is the member side: it checks and applies lists and reports who joined and left.

use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;

/// Largest member list accepted; about 2,000 members with three addresses each.
pub const MAX_ROOM_MESSAGE: usize = 256 * 1024;
/// Longest room name accepted.
pub const MAX_ROOM_NAME: usize = 64;
const TOPIC_PREFIX: &str = "/syncscope/room/1/";

/// The gossipsub topic of room `name`, or an error if the name is not acceptable.
pub fn topic_of(name: &str) -> Result<String, RoomError> {
    validate_name(name)?;
    Ok(format!("{TOPIC_PREFIX}{name}"))
}

/// The room name of a topic, if it is a room topic with a valid name.
pub fn room_of(topic: &str) -> Option<&str> {
    let name = topic.strip_prefix(TOPIC_PREFIX)?;
    validate_name(name).ok().map(|()| name)
}

fn validate_name(name: &str) -> Result<(), RoomError> {
    let problem = if name.is_empty() {
        BadName::Empty
    } else if name.len() > MAX_ROOM_NAME {
        BadName::TooLong { len: name.len() }
    } else if let Some(c) = name.chars().find(|&c| !c.is_ascii_alphanumeric() && !"-_.".contains(c))
    {
        BadName::BadChar(c)
    } else {
        return Ok(());
    };
    Err(RoomError::BadName(problem))
}

/// A room name as it appears in a member list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomName(String);

impl fmt::Display for RoomName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// What is wrong with a room name.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BadName {
    #[error("it is empty")]
    Empty,
    #[error("it has {len} bytes")]
    TooLong { len: usize },
    #[error("it contains {0:?}")]
    BadChar(char),
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RoomError {
    #[error("a room name must be 1-64 characters of letters, digits, '-', '_' or '.', but {0}")]
    BadName(BadName),
    #[error("member list of {0} bytes is over the {MAX_ROOM_MESSAGE} byte limit")]
    TooLarge(usize),
    #[error("malformed member list: {0}")]
    Malformed(#[from] prost::DecodeError),
    #[error("member list for room {got} arrived on the topic of room {expected}")]
    WrongRoom { expected: RoomName, got: RoomName },
}

/// The member list the relay publishes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RoomMembers {
    #[prost(string, tag = "1")]
    pub room: String,
    /// Increases with every list the relay publishes for this room; older lists are ignored.
    #[prost(uint64, tag = "2")]
    pub seq: u64,
    #[prost(message, repeated, tag = "3")]
    pub members: Vec<Member>,
}

#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Member {
    /// The member's peer id, as bytes.
    #[prost(bytes = "vec", tag = "1")]
    pub peer_id: Vec<u8>,
    /// Circuit addresses through the relay, one per relay transport, as multiaddr bytes.
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub addrs: Vec<Vec<u8>>,
    /// The member's identify agent string, e.g. `syncscope/0.1.0 (browser)`.
    #[prost(string, tag = "3")]
    pub agent: String,
}

impl RoomMembers {
    pub fn encode_to_vec(&self) -> Vec<u8> {
        prost::Message::encode_to_vec(self)
    }

    pub fn decode(data: &[u8]) -> Result<Self, RoomError> {
        if data.len() > MAX_ROOM_MESSAGE {
            return Err(RoomError::TooLarge(data.len()));
        }
        Ok(<Self as prost::Message>::decode(data)?)
    }
}

/// A change in a room's membership.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomChange {
    Joined(Member),
    Left(Vec<u8>),
}

/// A member's view of one room, fed with the relay's lists.
#[derive(Debug, Default)]
pub struct RoomView {
    name: String,
    seq: Option<u64>,
    members: BTreeMap<Vec<u8>, Member>,
}

impl RoomView {
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Default::default() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether a list from the relay has been applied yet.
    pub fn has_list(&self) -> bool {
        self.seq.is_some()
    }

    pub fn members(&self) -> impl Iterator<Item = &Member> {
        self.members.values()
    }

    /// Applies a list received from the relay and returns what changed. `me` is left out of the
    /// view. Lists older than the newest seen are ignored.
    pub fn apply(&mut self, data: &[u8], me: &[u8]) -> Result<Vec<RoomChange>, RoomError> {
        let list = RoomMembers::decode(data)?;
        if list.room != self.name {
            let expected = RoomName(self.name.clone());
            return Err(RoomError::WrongRoom { expected, got: RoomName(list.room) });
        }
        if self.seq.is_some_and(|seen| list.seq <= seen) {
            return Ok(Vec::new());
        }
        self.seq = Some(list.seq);
        let next: BTreeMap<_, _> = list
            .members
            .into_iter()
            .filter(|m| m.peer_id != me)
            .map(|m| (m.peer_id.clone(), m))
            .collect();
        let mut changes: Vec<_> = self
            .members
            .keys()
            .filter(|id| !next.contains_key(*id))
            .map(|id| RoomChange::Left(id.clone()))
            .collect();
        changes.extend(
            next.iter()
                .filter(|(id, m)| self.members.get(*id) != Some(m))
                .map(|(_, m)| RoomChange::Joined(m.clone())),
        );
        self.members = next;
        Ok(changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: u8) -> Member {
        Member { peer_id: vec![id], addrs: vec![vec![id, id]], agent: "test".into() }
    }

    fn list(seq: u64, ids: &[u8]) -> Vec<u8> {
        RoomMembers { room: "lab".into(), seq, members: ids.iter().map(|i| member(*i)).collect() }
            .encode_to_vec()
    }

    #[test]
    fn topics_round_trip_and_bad_names_are_refused() {
        assert_eq!(room_of(&topic_of("lab-1.x_y").unwrap()), Some("lab-1.x_y"));
        assert_eq!(topic_of(""), Err(RoomError::BadName(BadName::Empty)));
        assert_eq!(topic_of("a/b"), Err(RoomError::BadName(BadName::BadChar('/'))));
        assert_eq!(
            topic_of(&"a".repeat(65)),
            Err(RoomError::BadName(BadName::TooLong { len: 65 }))
        );
        assert_eq!(
            topic_of("a b").unwrap_err().to_string(),
            "a room name must be 1-64 characters of letters, digits, '-', '_' or '.', but it \
             contains ' '"
        );
        assert_eq!(room_of("/other/topic"), None);
    }

    #[test]
    fn joins_and_leaves_are_reported_and_self_is_left_out() {
        let mut view = RoomView::new("lab");
        let changes = view.apply(&list(1, &[1, 2, 9]), &[9]).unwrap();
        assert_eq!(changes, vec![RoomChange::Joined(member(1)), RoomChange::Joined(member(2))]);
        let changes = view.apply(&list(2, &[2, 3, 9]), &[9]).unwrap();
        assert_eq!(changes, vec![RoomChange::Left(vec![1]), RoomChange::Joined(member(3))]);
        assert_eq!(view.members().count(), 2);
    }

    #[test]
    fn stale_lists_are_ignored() {
        let mut view = RoomView::new("lab");
        view.apply(&list(5, &[1]), &[]).unwrap();
        assert_eq!(view.apply(&list(4, &[]), &[]).unwrap(), vec![]);
        assert_eq!(view.members().count(), 1);
    }

    #[test]
    fn malformed_oversized_and_misdirected_lists_are_errors() {
        let mut view = RoomView::new("lab");
        assert!(matches!(view.apply(&[0xff, 0xff], &[]), Err(RoomError::Malformed(_))));
        let big = vec![0; MAX_ROOM_MESSAGE + 1];
        assert_eq!(view.apply(&big, &[]), Err(RoomError::TooLarge(MAX_ROOM_MESSAGE + 1)));
        let other = RoomMembers { room: "other".into(), seq: 1, members: vec![] }.encode_to_vec();
        assert_eq!(
            view.apply(&other, &[]).unwrap_err().to_string(),
            "member list for room \"other\" arrived on the topic of room \"lab\""
        );
        assert_eq!(view.members().count(), 0);
    }
}
