//! Length-prefixed messages over a libp2p stream, on top of [`syncscope_proto::framing`].
//!
//! [`read_messages`] turns a stream into the messages it carries, read until EOF: each frame is
//! refused before its body is buffered when its length exceeds the cap, then decoded. The first
//! error ends it and drops the stream (a yamux stream dropped while open is reset), so a peer that
//! sends one bad frame gets nothing more read from that stream. [`read_with_progress`] also
//! reports every read that leaves a frame incomplete ([`Read::Progress`]): on a slow link a large
//! message takes many round trips to arrive, and a core that hears nothing meanwhile would take
//! the peer for silent.

use futures::{AsyncRead, AsyncReadExt, Stream, StreamExt};

use syncscope_proto::framing::{FrameDecoder, FrameError};

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

/// What reading a stream yields.
#[derive(Debug, PartialEq)]
pub enum Read<M> {
    /// Bytes of a message arrived; the message is not complete yet.
    Progress,
    Message(M),
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
    read_with_progress(io, max_len, decode).filter_map(|item| {
        futures::future::ready(match item {
            Ok(Read::Progress) => None,
            Ok(Read::Message(msg)) => Some(Ok(msg)),
            Err(e) => Some(Err(e)),
        })
    })
}

/// [`read_messages`], with [`Read::Progress`] after every read that leaves a frame incomplete.
pub fn read_with_progress<S, M, E, D>(
    io: S,
    max_len: usize,
    decode: D,
) -> impl Stream<Item = Result<Read<M>, ReadError<E>>>
where
    S: AsyncRead + Unpin,
    D: FnMut(&[u8]) -> Result<M, E>,
{
    let reader = Reader { io, decoder: FrameDecoder::new(max_len), buf: Vec::new(), decode };
    futures::stream::unfold(Some(reader), |state| async move {
        let mut r = state?;
        match next_item(&mut r).await {
            Ok(Some(item)) => Some((Ok(item), Some(r))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    })
}

/// The next message, or progress after a read that did not complete one; `None` at a clean end
/// of stream.
async fn next_item<S, M, E, D>(r: &mut Reader<S, D>) -> Result<Option<Read<M>>, ReadError<E>>
where
    S: AsyncRead + Unpin,
    D: FnMut(&[u8]) -> Result<M, E>,
{
    if let Some(msg) = next_message(r)? {
        return Ok(Some(Read::Message(msg)));
    }
    if r.buf.is_empty() {
        r.buf = vec![0; READ_CHUNK];
    }
    match r.io.read(&mut r.buf).await? {
        0 => r.decoder.finish().map(|()| None).map_err(ReadError::Frame),
        n => {
            r.decoder.extend(&r.buf[..n]);
            Ok(Some(next_message(r)?.map_or(Read::Progress, Read::Message)))
        }
    }
}

/// The next whole message already buffered.
fn next_message<S, M, E, D>(r: &mut Reader<S, D>) -> Result<Option<M>, ReadError<E>>
where
    D: FnMut(&[u8]) -> Result<M, E>,
{
    match r.decoder.next_frame().map_err(ReadError::Frame)? {
        Some(frame) => (r.decode)(&frame).map(Some).map_err(ReadError::Decode),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::StreamExt;
    use syncscope_proto::framing::encode_frame;
    use syncscope_proto::test_utils::Probe;

    fn decode(body: &[u8]) -> Result<Probe, FrameError> {
        syncscope_proto::framing::decode_body(body)
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
    fn a_message_that_takes_several_reads_is_announced_by_progress() {
        let big = Probe { data: vec![7; 3 * READ_CHUNK] };
        let small = Probe { data: vec![1; 10] };
        let mut bytes = encode_frame(&small, 1 << 20).unwrap();
        bytes.extend(encode_frame(&big, 1 << 20).unwrap());
        let stream = read_with_progress(futures::io::Cursor::new(bytes), 1 << 20, decode);
        let read: Vec<Read<Probe>> = block_on(stream.map(Result::unwrap).collect());
        // The first read holds the small message and the start of the big one; three more
        // reads are needed, the last of which completes it.
        let expected = [Read::Message(small), Read::Progress, Read::Progress, Read::Message(big)];
        assert_eq!(read, expected);
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
