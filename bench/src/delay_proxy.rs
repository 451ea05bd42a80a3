//! A user-space delaying TCP proxy on loopback, standing in for netem (which this kernel lacks):
//! every read is held for the one-way delay before it is written on, in both directions. Round
//! trips grow by twice the delay, as on a long link; but both legs are loopback sockets, so the
//! sender's TCP congestion window never sees the delay and does not have to grow across it.
//!
//! The proxy runs on its own thread and its allocations are not counted ([`crate::alloc_counter`]):
//! it is the network, not part of either host.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Most bytes held in one direction of one connection; reading stops above it.
const MAX_HELD: usize = 64 * 1024 * 1024;

/// A running proxy; it stops when dropped.
pub struct DelayProxy {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl DelayProxy {
    /// Listens on a fresh loopback port and forwards every connection to `target` with `delay`
    /// added in each direction.
    pub fn start(target: SocketAddr, delay: Duration) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_start(crate::alloc_counter::exclude_this_thread)
            .enable_all()
            .build()?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        runtime.spawn(async move {
            let Ok(listener) = TcpListener::from_std(listener) else { return };
            while let Ok((inbound, _)) = listener.accept().await {
                tokio::spawn(async move {
                    if let Ok(outbound) = TcpStream::connect(target).await {
                        let _ = inbound.set_nodelay(true);
                        let _ = outbound.set_nodelay(true);
                        connect(inbound, outbound, delay).await;
                    }
                });
            }
        });
        Ok(DelayProxy { addr, runtime: Some(runtime) })
    }
}

impl Drop for DelayProxy {
    /// Stops without blocking, so that a proxy may be dropped inside async code.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn connect(a: TcpStream, b: TcpStream, delay: Duration) {
    let (a_read, a_write) = a.into_split();
    let (b_read, b_write) = b.into_split();
    tokio::join!(pipe(a_read, b_write, delay), pipe(b_read, a_write, delay));
}

/// Copies `from` to `to`, writing each read `delay` after it arrived.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let (held_tx, mut held_rx) = mpsc::unbounded_channel::<usize>();
    let reader = async move {
        let mut held = 0usize;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            while let Ok(written) = held_rx.try_recv() {
                held -= written;
            }
            if held > MAX_HELD {
                match held_rx.recv().await {
                    Some(written) => held -= written,
                    None => return,
                }
                continue;
            }
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    held += n;
                    if tx.send((Instant::now() + delay, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    };
    let writer = async move {
        let mut pending = VecDeque::new();
        while let Some(item) = rx.recv().await {
            pending.push_back(item);
            while let Some((due, data)) = pending.pop_front() {
                tokio::time::sleep_until(due).await;
                if to.write_all(&data).await.is_err() {
                    return;
                }
                let _ = held_tx.send(data.len());
                while let Ok(next) = rx.try_recv() {
                    pending.push_back(next);
                }
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_through_the_proxy_takes_twice_the_delay() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let target = echo.local_addr().unwrap();
            tokio::spawn(async move {
                let (mut s, _) = echo.accept().await.unwrap();
                let mut buf = [0u8; 4];
                s.read_exact(&mut buf).await.unwrap();
                s.write_all(&buf).await.unwrap();
            });
            let proxy = DelayProxy::start(target, Duration::from_millis(50)).unwrap();
            let mut client = TcpStream::connect(proxy.addr).await.unwrap();
            let start = std::time::Instant::now();
            client.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            client.read_exact(&mut buf).await.unwrap();
            let rtt = start.elapsed();
            assert_eq!(&buf, b"ping");
            assert!(rtt >= Duration::from_millis(100), "{rtt:?}");
            assert!(rtt < Duration::from_millis(300), "{rtt:?}");
            drop(proxy);
        });
    }
}
