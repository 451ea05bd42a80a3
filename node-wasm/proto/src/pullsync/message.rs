//! bee's pull-sync messages (`pkg/pullsync/pb/pullsync.proto`), written out as prost structs, plus
//! the `DeliveryBatch` of the batching experiment (bee PR 5540). Byte fields are [`Bytes`] so a
//! decoded delivery shares the frame's buffer instead of copying the chunk.

use crate::framing::FrameError;
use bytes::Bytes;

/// Stream protocol for one interval: Get, Offer, Want, then Delivery messages.
pub const PROTOCOL_NAME: &str = "/swarm/pullsync/1.4.0/pullsync";
/// Stream protocol for one interval with batched delivery: as [`PROTOCOL_NAME`], but deliveries
/// arrive as `DeliveryBatch` messages. A separate name because protobuf messages carry no type tag:
/// the reader must know which of the two it is decoding.
pub const BATCHED_PROTOCOL_NAME: &str = "/swarm/pullsync/1.4.0/pullsync-batched";
/// Stream protocol for the cursors exchange: Syn, then Ack.
pub const CURSORS_PROTOCOL_NAME: &str = "/swarm/pullsync/1.4.0/cursors";
/// Largest message body accepted or sent on any pull-sync stream.
pub const MAX_MESSAGE_SIZE: usize = 128 * 1024;
/// Most deliveries in one `DeliveryBatch`: 25 full chunks fit in [`MAX_MESSAGE_SIZE`].
pub const MAX_BATCH: usize = 25;

#[derive(Clone, PartialEq, prost::Message)]
pub struct Syn {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Ack {
    #[prost(uint64, repeated, tag = "1")]
    pub cursors: Vec<u64>,
    #[prost(uint64, tag = "2")]
    pub epoch: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Get {
    #[prost(int32, tag = "1")]
    pub bin: i32,
    #[prost(uint64, tag = "2")]
    pub start: u64,
}

/// One offered chunk (the proto's `Chunk`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Chunk {
    #[prost(bytes = "bytes", tag = "1")]
    pub address: Bytes,
    #[prost(bytes = "bytes", tag = "2")]
    pub batch_id: Bytes,
    #[prost(bytes = "bytes", tag = "3")]
    pub stamp_hash: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Offer {
    #[prost(uint64, tag = "1")]
    pub topmost: u64,
    #[prost(message, repeated, tag = "2")]
    pub chunks: Vec<Chunk>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Want {
    #[prost(bytes = "bytes", tag = "1")]
    pub bit_vector: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Delivery {
    #[prost(bytes = "bytes", tag = "1")]
    pub address: Bytes,
    #[prost(bytes = "bytes", tag = "2")]
    pub data: Bytes,
    #[prost(bytes = "bytes", tag = "3")]
    pub stamp: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct DeliveryBatch {
    #[prost(message, repeated, tag = "1")]
    pub deliveries: Vec<Delivery>,
}

/// Decodes one frame body without copying its byte fields.
pub(crate) fn decode<M: prost::Message + Default>(body: Bytes) -> Result<M, FrameError> {
    Ok(M::decode(body)?)
}

/// Decodes one frame body into `msg`, appending to its repeated fields (to reuse their vectors).
pub(crate) fn merge<M: prost::Message>(msg: &mut M, body: Bytes) -> Result<(), FrameError> {
    Ok(msg.merge(body)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    // Hand-built bytes, field by field, as bee's gogo-protobuf writes them.
    #[test]
    fn get_and_ack_match_the_proto_wire_format() {
        let get = Get { bin: 3, start: 300 };
        assert_eq!(get.encode_to_vec(), vec![0x08, 3, 0x10, 0xac, 0x02]);
        let ack = Ack { cursors: vec![1, 2], epoch: 7 };
        // proto3 packs repeated scalars: tag 1 wire type 2, length 2, then the varints.
        assert_eq!(ack.encode_to_vec(), vec![0x0a, 2, 1, 2, 0x10, 7]);
    }

    #[test]
    fn delivery_field_order_and_tags() {
        let d = Delivery {
            address: Bytes::from_static(&[0xaa; 2]),
            data: Bytes::from_static(&[0xbb]),
            stamp: Bytes::new(),
        };
        assert_eq!(d.encode_to_vec(), vec![0x0a, 2, 0xaa, 0xaa, 0x12, 1, 0xbb]);
        let batch = DeliveryBatch { deliveries: vec![d.clone()] };
        let mut expected = vec![0x0a, 7];
        expected.extend(d.encode_to_vec());
        assert_eq!(batch.encode_to_vec(), expected);
    }

    #[test]
    fn offer_round_trips_and_decode_shares_the_buffer() {
        let offer = Offer {
            topmost: 9,
            chunks: vec![Chunk {
                address: Bytes::from(vec![1; 32]),
                batch_id: Bytes::from(vec![2; 32]),
                stamp_hash: Bytes::from(vec![3; 32]),
            }],
        };
        let body = Bytes::from(offer.encode_to_vec());
        let decoded: Offer = decode(body.clone()).unwrap();
        assert_eq!(decoded, offer);
        let start = body.as_ptr() as usize;
        let field = decoded.chunks[0].address.as_ptr() as usize;
        assert!(field > start && field < start + body.len());
    }

    #[test]
    fn full_batch_fits_the_message_cap() {
        let delivery = Delivery {
            address: Bytes::from(vec![0; 32]),
            data: Bytes::from(vec![0; 8 + 4096]),
            stamp: Bytes::from(vec![0; 113]),
        };
        let batch = DeliveryBatch { deliveries: vec![delivery; MAX_BATCH] };
        assert!(batch.encoded_len() <= MAX_MESSAGE_SIZE);
    }
}
