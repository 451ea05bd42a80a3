//! The link probe: a stream protocol that measures what a connection carries with nothing on it
//! but libp2p's own layers (security, multiplexing, the relay circuit). It is the ceiling every
//! data protocol is compared with, in the page and in `cargo xtask bench browser`.
//!
//! The asker writes how many bytes it wants (a big-endian `u64`) and closes its side; the server
//! writes that many bytes and closes. A server serves [`MAX_CONCURRENT`] probes at a time, each
//! for at most [`MAX_PROBE_BYTES`] and [`PROBE_TIMEOUT`], so that a probe costs it no more than a
//! large fetch would.

use std::future::Future;
use std::io;
use std::time::Duration;

use futures::{future, AsyncReadExt, AsyncWriteExt, FutureExt, StreamExt};
use futures_timer::Delay;
use libp2p::{PeerId, Stream, StreamProtocol};
use libp2p_stream::{Control, IncomingStreams, OpenStreamError};
use web_time::Instant;

pub const PROTOCOL: StreamProtocol = StreamProtocol::new("/syncscope/link-probe/1.0.0");
/// The most one probe may ask for.
pub const MAX_PROBE_BYTES: u64 = 1 << 30;
/// Probes a server serves at once; more wait.
pub const MAX_CONCURRENT: usize = 2;
/// A probe that takes longer than this is cut, on both sides: a reader that stops reading frees
/// the server's slot, and a server that stops sending does not leave the asker waiting.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(120);
/// Writes go out in pieces of this size: big enough that per-write costs vanish, small enough
/// that one piece fits the multiplexer's window several times.
const WRITE_SIZE: usize = 64 * 1024;

/// One probe's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkMeasurement {
    pub peer: PeerId,
    pub bytes: u64,
    /// From opening the stream to its last byte.
    pub elapsed: Duration,
}

impl LinkMeasurement {
    /// Throughput in bytes per second.
    pub fn bytes_per_sec(&self) -> f64 {
        self.bytes as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    #[error("a probe may ask for at most {MAX_PROBE_BYTES} bytes, not {0}")]
    TooLarge(u64),
    #[error("cannot open a link-probe stream: {0}")]
    Open(#[from] OpenStreamError),
    #[error("the link-probe stream failed: {0}")]
    Io(#[from] io::Error),
    #[error("the peer sent {got} bytes where {wanted} were asked for")]
    WrongLength { got: u64, wanted: u64 },
}

/// Asks `peer` for `bytes` bytes and times how long they take to arrive.
pub async fn measure(
    control: &mut Control,
    peer: PeerId,
    bytes: u64,
) -> Result<LinkMeasurement, ProbeError> {
    if bytes > MAX_PROBE_BYTES {
        return Err(ProbeError::TooLarge(bytes));
    }
    let started = Instant::now();
    let mut stream = control.open_stream(peer, PROTOCOL).await?;
    let got = within_timeout(receive(&mut stream, bytes)).await?;
    if got != bytes {
        return Err(ProbeError::WrongLength { got, wanted: bytes });
    }
    Ok(LinkMeasurement { peer, bytes, elapsed: started.elapsed() })
}

/// Asks for `bytes` on `stream` and counts what arrives, stopping once it is more.
async fn receive(stream: &mut Stream, bytes: u64) -> io::Result<u64> {
    stream.write_all(&bytes.to_be_bytes()).await?;
    stream.close().await?;
    let mut buf = vec![0; WRITE_SIZE];
    let mut got = 0u64;
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        got += n as u64;
        if got > bytes {
            break;
        }
    }
    Ok(got)
}

/// Serves every probe that arrives on `incoming`, until the node stops.
pub async fn serve(incoming: IncomingStreams) {
    incoming
        .for_each_concurrent(MAX_CONCURRENT, |(peer, stream)| async move {
            match within_timeout(serve_one(stream)).await {
                Ok(bytes) => tracing::debug!(%peer, bytes, "link probe served"),
                Err(e) => tracing::debug!(%peer, "link probe not served: {e}"),
            }
        })
        .await;
}

async fn serve_one(mut stream: Stream) -> io::Result<u64> {
    let mut request = [0; 8];
    stream.read_exact(&mut request).await?;
    let bytes = u64::from_be_bytes(request);
    if bytes > MAX_PROBE_BYTES {
        let message = format!("asked for {bytes} bytes, more than {MAX_PROBE_BYTES}");
        return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
    }
    let piece = vec![0; WRITE_SIZE];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(WRITE_SIZE as u64) as usize;
        stream.write_all(&piece[..n]).await?;
        left -= n as u64;
    }
    stream.close().await?;
    Ok(bytes)
}

/// `work`, or a timed-out error once [`PROBE_TIMEOUT`] has passed.
async fn within_timeout<T>(work: impl Future<Output = io::Result<T>>) -> io::Result<T> {
    let timeout = Delay::new(PROBE_TIMEOUT).map(|()| {
        Err(io::Error::new(io::ErrorKind::TimedOut, format!("not done within {PROBE_TIMEOUT:?}")))
    });
    future::select(Box::pin(work), timeout).await.factor_first().0
}
