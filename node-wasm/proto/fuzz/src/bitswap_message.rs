//! `bitswap::Message::decode` over any bytes: it must not panic, and a message that decodes must
//! re-encode (for Bitswap 1.2.0, which carries every field) to bytes that decode to the same
//! message, unless the re-encoding is over the size limit.

use syncscope_proto::bitswap::{Message, ProtocolVersion, MAX_MESSAGE_SIZE};
use syncscope_proto::framing::{FrameDecoder, FrameError};

pub fn run(data: &[u8]) {
    let Ok(message) = Message::decode(data) else { return };
    let frame = match message.encode_frame(ProtocolVersion::V1_2_0) {
        Ok(frame) => frame,
        // Raw 1.0.0 blocks gain a prefix each when re-encoded: a body under the limit can grow
        // past it.
        Err(FrameError::TooLarge { len, max }) => {
            assert!(len > max && max == MAX_MESSAGE_SIZE, "{len} > {max}");
            return;
        }
        Err(e) => panic!("a decoded message does not encode: {e}"),
    };
    assert_eq!(frame.len(), message.framed_len(ProtocolVersion::V1_2_0));
    let mut decoder = FrameDecoder::new(MAX_MESSAGE_SIZE);
    decoder.extend(&frame);
    let body = decoder.next_frame().expect("a valid frame").expect("a whole frame");
    assert_eq!(decoder.buffered(), 0);
    let again = Message::decode(&body).expect("a re-encoded message decodes");
    assert_eq!(again, message, "re-encoding changed the message");
}
