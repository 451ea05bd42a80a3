//! Length-prefixed messages over a libp2p stream, on top of [`crate::proto::framing`].
//!
//! [`read_messages`] turns a stream into the messages it carries, read until EOF: each frame is
//! refused before its body is buffered when its length exceeds the cap, then decoded. The first
//! error ends it and drops the stream (a yamux stream dropped while open is reset), so a peer that
//! sends one bad frame gets nothing more read from that stream.

use futures::{AsyncRead, AsyncReadExt, Stream};

use crate::proto::framing::{FrameDecoder, FrameError};

/// Bytes asked of the stream per read: a dozen 8 KiB blocks, or a 2 MiB block in 32 reads.
const READ_CHUNK: usize = 64 * 1024;

/// Why reading messages from a stream stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError<E> {
    /// The stream broke: not the peer's fault as far as we can tell.
    #[error("stream failed: {0}")]
    Io(#[from] std::io::Error),
    /// A frame was oversized, its length prefix invalid, or the stream ended inside it.
    #[error(transparent)]
    Frame(FrameError),
    /// A whole frame did not decode.
    #[error("undecodable message: {0}")]
    Decode(E),
}

struct Reader<S, D> {
    io: S,
    decoder: FrameDecoder,
    buf: Vec<u8>,
    decode: D,
}

/// The messages on `io` until it ends, each frame at most `max_len` bytes and turned into a
/// message by `decode`. Ends after the first error.
pub fn read_messages<S, M, E, D>(
    io: S,
    max_len: usize,
    decode: D,
) -> impl Stream<Item = Result<M, ReadError<E>>>
where
    S: AsyncRead + Unpin,
    D: FnMut(&[u8]) -> Result<M, E>,
{
    let reader = Reader { io, decoder: FrameDecoder::new(max_len), buf: Vec::new(), decode };
    futures::stream::unfold(Some(reader), |state| async move {
        let mut r = state?;
        match next_message(&mut r).await {
            Ok(Some(msg)) => Some((Ok(msg), Some(r))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    })
}

/// The next message, `None` at a clean end of stream.
async fn next_message<S, M, E, D>(r: &mut Reader<S, D>) -> Result<Option<M>, ReadError<E>>
where
    S: AsyncRead + Unpin,
    D: FnMut(&[u8]) -> Result<M, E>,
{
    loop {
        if let Some(frame) = r.decoder.next_frame().map_err(ReadError::Frame)? {
            return (r.decode)(&frame).map(Some).map_err(ReadError::Decode);
        }
        if r.buf.is_empty() {
            r.buf = vec![0; READ_CHUNK];
        }
        match r.io.read(&mut r.buf).await? {
            0 => return r.decoder.finish().map(|()| None).map_err(ReadError::Frame),
            n => r.decoder.extend(&r.buf[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::framing::encode_frame;
    use crate::proto::framing::tests::Probe;
    use futures::executor::block_on;
    use futures::StreamExt;

    fn decode(body: &[u8]) -> Result<Probe, FrameError> {
        crate::proto::framing::decode_body(body)
    }

    fn read_all(bytes: Vec<u8>, max: usize) -> Vec<Result<Probe, ReadError<FrameError>>> {
        block_on(read_messages(futures::io::Cursor::new(bytes), max, decode).collect())
    }

    #[test]
    fn reads_every_message_until_eof() {
        let msgs: Vec<Probe> = (0..3).map(|i| Probe { data: vec![i; 100_000] }).collect();
        let bytes: Vec<u8> = msgs.iter().flat_map(|m| encode_frame(m, 1 << 20).unwrap()).collect();
        let read: Vec<Probe> = read_all(bytes, 1 << 20).into_iter().map(Result::unwrap).collect();
        assert_eq!(read, msgs);
    }

    #[test]
    fn an_oversized_frame_ends_the_stream_with_an_error() {
        let mut bytes = encode_frame(&Probe { data: vec![1; 10] }, 1024).unwrap();
        bytes.extend(encode_frame(&Probe { data: vec![2; 2000] }, 4096).unwrap());
        bytes.extend(encode_frame(&Probe { data: vec![3; 10] }, 1024).unwrap());
        let read = read_all(bytes, 1024);
        assert_eq!(read.len(), 2, "nothing is read after the error");
        assert!(read[0].is_ok());
        assert!(matches!(read[1], Err(ReadError::Frame(FrameError::TooLarge { len: 2003, .. }))));
    }

    #[test]
    fn garbage_and_truncation_are_errors() {
        let read = read_all(vec![3, 0xff, 0xff, 0xff], 1024);
        assert!(matches!(read[..], [Err(ReadError::Decode(_))]));
        let frame = encode_frame(&Probe { data: vec![1; 10] }, 1024).unwrap();
        let read = read_all(frame[..5].to_vec(), 1024);
        assert!(matches!(read[..], [Err(ReadError::Frame(FrameError::Truncated { buffered: 5 }))]));
    }
}
