//! The `FrameDecoder` fed one byte stream cut into reads of arbitrary sizes, some copied
//! (`extend`) and some handed over whole (`extend_bytes`): whatever the cuts, it must give the
//! frames (and the error, if any) that a decoder of the whole stream at once gives.
//!
//! Input: `max_len` (u16, little-endian), a `u64` seeding the cuts, then the stream.

use bytes::Bytes;
use syncscope_proto::framing::{FrameDecoder, FrameError};

pub fn run(data: &[u8]) {
    if data.len() < 10 {
        return;
    }
    let max_len = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let mut cuts = Cuts(u64::from_le_bytes(data[2..10].try_into().unwrap_or_default()) | 1);
    let stream = &data[10..];

    let (expected, leftover) = reference(stream, max_len);
    let mut got = Vec::new();
    let mut decoder = FrameDecoder::new(max_len);
    let mut at = 0;
    let mut failed = false;
    'reads: while at < stream.len() {
        let (len, whole) = cuts.next();
        let read = &stream[at..(at + len).min(stream.len())];
        at += read.len();
        if whole {
            decoder.extend_bytes(Bytes::copy_from_slice(read));
        } else {
            decoder.extend(read);
        }
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    assert!(frame.len() <= max_len, "a frame over the limit");
                    got.push(Ok(frame.to_vec()));
                }
                Ok(None) => break,
                Err(e) => {
                    got.push(Err(e));
                    failed = true;
                    break 'reads;
                }
            }
        }
    }
    assert_eq!(got, expected, "cutting the stream changed what was decoded");
    if !failed {
        assert_eq!(decoder.buffered(), leftover);
        assert_eq!(decoder.finish().is_ok(), leftover == 0);
    }
}

/// The frames of the whole stream, then the error that stops it if any; and the bytes left over
/// (a partial frame) if none.
fn reference(stream: &[u8], max_len: usize) -> (Vec<Result<Vec<u8>, FrameError>>, usize) {
    let mut out = Vec::new();
    let mut rest = stream;
    loop {
        let (len, body) = match unsigned_varint_usize(rest) {
            Prefix::Incomplete => return (out, rest.len()),
            Prefix::Bad => {
                out.push(Err(FrameError::BadLength));
                return (out, 0);
            }
            Prefix::Len(len, body) => (len, body),
        };
        if len > max_len {
            out.push(Err(FrameError::TooLarge { len, max: max_len }));
            return (out, 0);
        }
        if body.len() < len {
            return (out, rest.len());
        }
        out.push(Ok(body[..len].to_vec()));
        rest = &body[len..];
    }
}

enum Prefix<'a> {
    Incomplete,
    Bad,
    Len(usize, &'a [u8]),
}

/// An unsigned LEB128 `usize` written out here (not the decoder's `unsigned-varint`): at most 10
/// bytes, no overflow, and minimal (no trailing zero byte after a continuation).
fn unsigned_varint_usize(buf: &[u8]) -> Prefix<'_> {
    let mut value: u64 = 0;
    for (i, &b) in buf.iter().enumerate() {
        let bits = u64::from(b & 0x7f);
        if i == 9 && b > 1 || i > 9 {
            return Prefix::Bad; // overflows 64 bits
        }
        value |= bits << (7 * i);
        if b & 0x80 == 0 {
            if b == 0 && i > 0 {
                return Prefix::Bad; // not minimal
            }
            return match usize::try_from(value) {
                Ok(len) => Prefix::Len(len, &buf[i + 1..]),
                Err(_) => Prefix::Bad,
            };
        }
    }
    Prefix::Incomplete
}

/// Read sizes and kinds from a xorshift generator: mostly small reads, sometimes large ones.
struct Cuts(u64);

impl Cuts {
    fn next(&mut self) -> (usize, bool) {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let len = match self.0 % 8 {
            0 => 1,
            1..=5 => 1 + (self.0 >> 8) as usize % 16,
            _ => 1 + (self.0 >> 8) as usize % 4096,
        };
        (len, self.0 & 0x100 != 0)
    }
}
