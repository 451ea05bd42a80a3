//! The gossipsub set-up shared by the relay and every node for rooms (see
//! [`syncscope_proto::rooms`]): signed messages, validated by the application, and only room topics
//! accepted from peers.

use std::time::Duration;

use libp2p::{
    gossipsub::{
        self, IdentityTransform, MaxCountSubscriptionFilter, MessageAuthenticity, TopicHash,
        TopicSubscriptionFilter, ValidationMode,
    },
    identity::Keypair,
};

use syncscope_proto::rooms::{room_of, MAX_ROOM_MESSAGE};

/// Rooms one peer may be in at once, and may name in one subscription request.
pub const MAX_ROOMS_PER_PEER: usize = 16;

/// Accepts subscriptions to room topics only.
#[derive(Debug, Default, Clone, Copy)]
pub struct RoomTopics;

impl TopicSubscriptionFilter for RoomTopics {
    fn can_subscribe(&mut self, topic: &TopicHash) -> bool {
        room_of(topic.as_str()).is_some()
    }
}

pub type RoomsBehaviour =
    gossipsub::Behaviour<IdentityTransform, MaxCountSubscriptionFilter<RoomTopics>>;

/// Why the rooms behaviour could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RoomsConfigError {
    #[error("invalid gossipsub config for rooms: {0}")]
    Config(#[from] gossipsub::ConfigBuilderError),
    #[error("invalid gossipsub set-up for rooms: {0}")]
    Behaviour(&'static str),
}

pub fn rooms_behaviour(key: &Keypair) -> Result<RoomsBehaviour, RoomsConfigError> {
    let config = gossipsub::ConfigBuilder::default()
        .validation_mode(ValidationMode::Strict)
        .validate_messages()
        .max_transmit_size(MAX_ROOM_MESSAGE + 4096)
        .heartbeat_interval(Duration::from_secs(1))
        .build()?;
    let filter = MaxCountSubscriptionFilter {
        filter: RoomTopics,
        max_subscribed_topics: usize::MAX,
        max_subscriptions_per_request: MAX_ROOMS_PER_PEER,
    };
    gossipsub::Behaviour::new_with_subscription_filter(
        MessageAuthenticity::Signed(key.clone()),
        config,
        filter,
    )
    .map_err(RoomsConfigError::Behaviour)
}
