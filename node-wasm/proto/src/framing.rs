//! Length-prefixed framing shared by every protocol: an unsigned varint holding the length, then
//! that many bytes of protobuf.
//!
//! The decoder is sans-IO: feed it bytes as they arrive with [`FrameDecoder::extend`] (or, without
//! copying, [`FrameDecoder::extend_bytes`]) and take whole frames out with
//! [`FrameDecoder::next_frame`]. A length above the cap is refused before any of
//! the body is buffered, so a peer cannot make us allocate more than `max_len` bytes per stream.

use bytes::{Buf, Bytes, BytesMut};
use thiserror::Error;

/// Why a frame or the message inside it was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameError {
    /// The length prefix announces more bytes than the protocol allows.
    #[error("message of {len} bytes exceeds the {max} byte limit")]
    TooLarge { len: usize, max: usize },
    /// The length prefix is not a valid unsigned varint (overlong or overflowing).
    #[error("invalid varint length prefix")]
    BadLength,
    /// The stream ended in the middle of a frame.
    #[error("stream ended inside a frame ({buffered} bytes buffered)")]
    Truncated { buffered: usize },
    /// The frame is not a valid protobuf message.
    #[error("malformed protobuf: {0}")]
    Protobuf(#[from] prost::DecodeError),
    /// The message did not fit the buffer it was encoded into.
    #[error("cannot encode protobuf: {0}")]
    Encode(#[from] prost::EncodeError),
}

/// Reassembles length-prefixed frames from arbitrary chunks of a byte stream.
#[derive(Debug)]
pub struct FrameDecoder {
    max_len: usize,
    /// Bytes of frames that arrived in pieces.
    buf: BytesMut,
    /// A read handed over whole: frames are sliced out of it without copying. Only ever
    /// non-empty while `buf` is empty, so the order of bytes is `whole` then `buf`.
    whole: Bytes,
}

impl FrameDecoder {
    pub fn new(max_len: usize) -> Self {
        Self { max_len, buf: BytesMut::new(), whole: Bytes::new() }
    }

    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Appends bytes read from the stream.
    pub fn extend(&mut self, data: &[u8]) {
        self.spill();
        self.buf.extend_from_slice(data);
    }

    /// Appends bytes read from the stream, keeping them: frames wholly inside `data` are handed
    /// out as slices of it, so a large read costs no copy.
    pub fn extend_bytes(&mut self, data: Bytes) {
        if self.buf.is_empty() && self.whole.is_empty() {
            self.whole = data;
        } else {
            self.extend(&data);
        }
    }

    /// Number of bytes held that do not yet form a whole frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() + self.whole.len()
    }

    /// Returns the next whole frame, `Ok(None)` if more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, FrameError> {
        if !self.whole.is_empty() {
            if let Some((len, prefix)) = decode_length(&self.whole)? {
                if len > self.max_len {
                    return Err(FrameError::TooLarge { len, max: self.max_len });
                }
                if self.whole.len() >= prefix + len {
                    self.whole.advance(prefix);
                    return Ok(Some(self.whole.split_to(len)));
                }
            }
            self.spill();
        }
        let Some((len, prefix)) = decode_length(&self.buf)? else {
            return Ok(None);
        };
        if len > self.max_len {
            return Err(FrameError::TooLarge { len, max: self.max_len });
        }
        if self.buf.len() < prefix + len {
            self.buf.reserve(prefix + len - self.buf.len());
            return Ok(None);
        }
        self.buf.advance(prefix);
        Ok(Some(self.buf.split_to(len).freeze()))
    }

    /// Call at end of stream: fails if a partial frame is left over.
    pub fn finish(&self) -> Result<(), FrameError> {
        match self.buffered() {
            0 => Ok(()),
            buffered => Err(FrameError::Truncated { buffered }),
        }
    }

    /// Moves what is left of a whole read (the start of a frame cut by the read's end) into the
    /// buffer, where the rest of that frame will join it.
    fn spill(&mut self) {
        if !self.whole.is_empty() {
            self.buf.extend_from_slice(&self.whole);
            self.whole.clear();
        }
    }
}

/// Parses a varint length prefix: `Ok(None)` when it is still incomplete.
fn decode_length(buf: &[u8]) -> Result<Option<(usize, usize)>, FrameError> {
    match unsigned_varint::decode::usize(buf) {
        Ok((len, rest)) => {
            let prefix = buf.len() - rest.len();
            // unsigned-varint keeps only the low bits of a last byte that overflows `usize` (the
            // 10th byte of a 64-bit length, the 5th of a 32-bit one): `ff ff .. ff 7f` would read
            // as 2^63 - 1, `80 .. 80 02` as 0. Such a prefix is no valid length.
            let last = buf[prefix - 1];
            let bits = 7 * (prefix - 1) + (u8::BITS - last.leading_zeros()) as usize;
            if bits > usize::BITS as usize {
                return Err(FrameError::BadLength);
            }
            Ok(Some((len, prefix)))
        }
        Err(unsigned_varint::decode::Error::Insufficient) => Ok(None),
        Err(_) => Err(FrameError::BadLength),
    }
}

/// Encodes `msg` as one frame, refusing messages whose body exceeds `max_len`.
pub fn encode_frame<M: prost::Message>(msg: &M, max_len: usize) -> Result<Vec<u8>, FrameError> {
    let len = msg.encoded_len();
    if len > max_len {
        return Err(FrameError::TooLarge { len, max: max_len });
    }
    let mut out = Vec::with_capacity(len + 10);
    let mut prefix = unsigned_varint::encode::usize_buffer();
    out.extend_from_slice(unsigned_varint::encode::usize(len, &mut prefix));
    msg.encode(&mut out)?;
    Ok(out)
}

/// Appends `msg` as one frame to `out`, refusing messages whose body exceeds `max_len`. Writing
/// into a caller-owned buffer lets hot paths reuse one allocation for many frames.
pub fn encode_frame_into<M: prost::Message>(
    msg: &M,
    max_len: usize,
    out: &mut BytesMut,
) -> Result<(), FrameError> {
    let len = msg.encoded_len();
    if len > max_len {
        return Err(FrameError::TooLarge { len, max: max_len });
    }
    // Room for the whole frame at once: prost's writes would otherwise grow the buffer step by
    // step, copying what a batch of blocks holds so far each time (a seed's 1 MiB batches: about
    // 0.5 % of the relay's CPU with its seeds, perf during a fetch).
    out.reserve(prost::length_delimiter_len(len) + len);
    Ok(msg.encode_length_delimited(out)?)
}

/// Size on the wire of a frame holding `msg`: prefix plus body.
pub fn framed_len<M: prost::Message>(msg: &M) -> usize {
    let len = msg.encoded_len();
    prost::length_delimiter_len(len) + len
}

/// Decodes the protobuf body of one frame.
pub fn decode_body<M: prost::Message + Default>(body: &[u8]) -> Result<M, FrameError> {
    Ok(M::decode(body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_utils::Probe;

    fn probe(n: usize) -> Probe {
        Probe { data: vec![7; n] }
    }

    #[test]
    fn round_trip_byte_by_byte() {
        let frame = encode_frame(&probe(300), 1024).unwrap();
        assert_eq!(frame.len(), framed_len(&probe(300)));
        let mut dec = FrameDecoder::new(1024);
        let mut out = Vec::new();
        for b in &frame {
            dec.extend(&[*b]);
            if let Some(f) = dec.next_frame().unwrap() {
                out.push(decode_body::<Probe>(&f).unwrap());
            }
        }
        assert_eq!(out, vec![probe(300)]);
        dec.finish().unwrap();
    }

    #[test]
    fn encode_into_matches_encode() {
        let mut out = BytesMut::new();
        encode_frame_into(&probe(300), 1024, &mut out).unwrap();
        assert_eq!(&out[..], &encode_frame(&probe(300), 1024).unwrap()[..]);
        assert_eq!(
            encode_frame_into(&probe(200), 100, &mut out),
            Err(FrameError::TooLarge { len: 203, max: 100 })
        );
    }

    #[test]
    fn two_frames_in_one_read() {
        let mut bytes = encode_frame(&probe(1), 64).unwrap();
        bytes.extend(encode_frame(&probe(2), 64).unwrap());
        let mut dec = FrameDecoder::new(64);
        dec.extend(&bytes);
        assert_eq!(decode_body::<Probe>(&dec.next_frame().unwrap().unwrap()).unwrap(), probe(1));
        assert_eq!(decode_body::<Probe>(&dec.next_frame().unwrap().unwrap()).unwrap(), probe(2));
        assert_eq!(dec.next_frame().unwrap(), None);
    }

    #[test]
    fn oversized_prefix_is_refused_before_the_body_arrives() {
        let mut dec = FrameDecoder::new(100);
        let mut prefix = unsigned_varint::encode::usize_buffer();
        dec.extend(unsigned_varint::encode::usize(101, &mut prefix));
        assert_eq!(dec.next_frame(), Err(FrameError::TooLarge { len: 101, max: 100 }));
    }

    #[test]
    fn oversized_message_is_refused_on_encode() {
        assert_eq!(
            encode_frame(&probe(200), 100),
            Err(FrameError::TooLarge { len: 203, max: 100 })
        );
    }

    #[test]
    fn overlong_varint_is_refused() {
        let mut dec = FrameDecoder::new(100);
        dec.extend(&[0xff; 11]);
        assert_eq!(dec.next_frame(), Err(FrameError::BadLength));
    }

    /// Found by the `framing` fuzz target: a 10-byte prefix whose last byte overflows 64 bits
    /// was read with the overflow dropped, as a wrong length (here 0: an empty frame accepted).
    #[test]
    fn overflowing_varint_is_refused_not_truncated() {
        let mut zero = vec![0x80; 9];
        zero.push(0x02);
        let mut max = vec![0xff; 9];
        max.push(0x7f);
        for prefix in [zero, max] {
            let mut dec = FrameDecoder::new(100);
            dec.extend(&prefix);
            assert_eq!(dec.next_frame(), Err(FrameError::BadLength), "{prefix:02x?}");
            let mut dec = FrameDecoder::new(100);
            dec.extend_bytes(Bytes::from(prefix));
            assert_eq!(dec.next_frame(), Err(FrameError::BadLength));
        }
        // The largest 64-bit length is still a length (refused for its size).
        let mut largest = vec![0xff; 9];
        largest.push(0x01);
        let mut dec = FrameDecoder::new(100);
        dec.extend(&largest);
        if usize::BITS == 64 {
            assert_eq!(dec.next_frame(), Err(FrameError::TooLarge { len: usize::MAX, max: 100 }));
        } else {
            assert_eq!(dec.next_frame(), Err(FrameError::BadLength));
        }
    }

    #[test]
    fn whole_reads_are_sliced_without_copying_and_cut_frames_still_join() {
        let mut bytes = encode_frame(&probe(100), 1024).unwrap();
        bytes.extend(encode_frame(&probe(200), 1024).unwrap());
        bytes.extend(encode_frame(&probe(300), 1024).unwrap());
        let cut = bytes.len() - 150;
        let first = Bytes::from(bytes[..cut].to_vec());
        let mut dec = FrameDecoder::new(1024);
        dec.extend_bytes(first.clone());
        let frame = dec.next_frame().unwrap().unwrap();
        let inside = first.as_ptr() as usize..first.as_ptr() as usize + first.len();
        assert!(inside.contains(&(frame.as_ptr() as usize)), "sliced, not copied");
        assert_eq!(decode_body::<Probe>(&frame).unwrap(), probe(100));
        assert_eq!(decode_body::<Probe>(&dec.next_frame().unwrap().unwrap()).unwrap(), probe(200));
        assert_eq!(dec.next_frame(), Ok(None));
        assert!(dec.finish().is_err());
        dec.extend_bytes(Bytes::from(bytes[cut..].to_vec()));
        assert_eq!(decode_body::<Probe>(&dec.next_frame().unwrap().unwrap()).unwrap(), probe(300));
        assert_eq!(dec.buffered(), 0);
        dec.finish().unwrap();
    }

    #[test]
    fn oversized_prefix_in_a_whole_read_is_refused() {
        let mut dec = FrameDecoder::new(100);
        let mut prefix = unsigned_varint::encode::usize_buffer();
        dec.extend_bytes(Bytes::copy_from_slice(unsigned_varint::encode::usize(101, &mut prefix)));
        assert_eq!(dec.next_frame(), Err(FrameError::TooLarge { len: 101, max: 100 }));
    }

    #[test]
    fn truncated_stream_is_reported() {
        let frame = encode_frame(&probe(10), 64).unwrap();
        let mut dec = FrameDecoder::new(64);
        dec.extend(&frame[..5]);
        assert_eq!(dec.next_frame(), Ok(None));
        assert_eq!(dec.finish(), Err(FrameError::Truncated { buffered: 5 }));
    }

    #[test]
    fn garbage_body_is_a_protobuf_error() {
        assert!(matches!(decode_body::<Probe>(&[0x0a, 0x05, 1]), Err(FrameError::Protobuf(_))));
    }
}
