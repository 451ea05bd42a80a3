//! Native peers: the relay's own seed peers serve deterministic demo content, and
//! `syncscope-relay peer` processes on "other hosts" serve and fetch files through the relay; a
//! node reports its counters as often as it is told.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{http_get, node, temp_dir, wait_for, Relay};
use futures::StreamExt;
use syncscope_node::content::import_demo;
use syncscope_node::node::{self, FetchUpdate, NodeConfig, NodeEvent, TransportKind};
use syncscope_node::store::{BlockStore, DiskBlockStore};

fn sum_metric(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_peers_serve_the_demo_content_under_a_stable_link() {
    let relay =
        Relay::start(&["--seed-peers", "2", "--seed-content", "1MiB", "--content-seed", "5"]);
    let expected = import_demo(5, 1 << 20).unixfs.root;
    let link = relay.printed.iter().find(|l| l.starts_with("share link: ")).expect("a share link");
    assert!(link.ends_with(&format!("?room=default&fetch={expected}&transport=ws")), "{link}");

    let mut fetcher = node(&relay, "tcp").await;
    fetcher.join_room("default").unwrap();
    wait_for(&mut fetcher, Duration::from_secs(10), |e| {
        matches!(e, NodeEvent::Connected { transport: TransportKind::Circuit, .. })
    })
    .await;
    fetcher.fetch(expected).unwrap();
    let done = wait_for(&mut fetcher, Duration::from_secs(30), |e| {
        matches!(e, NodeEvent::Fetch(FetchUpdate::Done { .. } | FetchUpdate::Failed { .. }))
    })
    .await;
    assert!(matches!(done, NodeEvent::Fetch(FetchUpdate::Done { size: 1048576, .. })), "{done:?}");

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let metrics = http_get(&relay, "/metrics");
    assert!(sum_metric(&metrics, "syncscope_seed_bitswap_blocks_sent_total") >= 5.0, "{metrics}");
}

/// A `syncscope-relay peer` process; its stdout lines arrive on `lines`.
struct PeerProcess {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl PeerProcess {
    fn start(relay: &Relay, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_syncscope-relay"))
            .args(["peer", "--relay", &relay.addr("tcp").to_string(), "--room", "hosts"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Self { child, lines }
    }

    fn line_containing(&self, text: &str) -> String {
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(30)).expect("peer output");
            if line.contains(text) {
                return line;
            }
        }
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_peer_process_serves_a_file_that_another_fetches() {
    let relay = Relay::start(&[]);
    let file = temp_dir("peer-file").join("data.bin");
    let data: Vec<u8> =
        (0..3_000_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(&file, &data).unwrap();

    let server = PeerProcess::start(&relay, &["--add", file.to_str().unwrap()]);
    let serving = server.line_containing("as UnixFS");
    let cid = serving.split_whitespace().skip_while(|w| *w != "UnixFS").nth(1).unwrap().to_string();

    let fetcher = PeerProcess::start(&relay, &["--fetch", &cid]);
    let fetched = fetcher.line_containing("fetched");
    assert!(fetched.contains(&cid) && fetched.contains("verified"), "{fetched}");
    assert!(fetched.contains("2.9 MiB"), "{fetched}");
}

/// The number in `line` right before `word`, e.g. 12 in "12 blocks".
fn number_before(line: &str, word: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.trim_start_matches('(') == word).unwrap();
    words[at - 1].trim_start_matches('(').parse().unwrap()
}

/// How many blocks the store at `path` holds: those whose transaction committed.
async fn committed_blocks(path: &std::path::Path) -> u64 {
    let store = DiskBlockStore::open(path).unwrap();
    store.inventory().await.unwrap().len() as u64
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_killed_mid_fetch_resumes_from_its_store_with_the_same_identity() {
    let relay = Relay::start(&[]);
    let server = PeerProcess::start(&relay, &["--demo-content", "48MiB", "--content-seed", "7"]);
    let cid = import_demo(7, 48 << 20).unixfs.root.to_string();
    server.line_containing(&cid);

    let data_dir = temp_dir("resume-data");
    let args = ["--data-dir", data_dir.to_str().unwrap(), "--fetch", &cid];
    let first = PeerProcess::start(&relay, &args);
    let first_id = first.line_containing("joining room");
    // Kill once part of the file is on disk: redb's file doubles as it fills, 8 MiB of 48 is
    // part way. Polled rather than printed, so that the peer gets no chance to wind down.
    let store = data_dir.join("blocks.redb");
    let started = Instant::now();
    while std::fs::metadata(&store).map_or(0, |m| m.len()) < 8 << 20 {
        assert!(started.elapsed() < Duration::from_secs(30), "the fetch never stored 8 MiB");
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(first); // SIGKILL: no chance to flush or close anything.
    let committed = committed_blocks(&store).await;

    let second = PeerProcess::start(&relay, &args);
    let second_id = second.line_containing("joining room");
    assert_eq!(first_id.split_whitespace().nth(1), second_id.split_whitespace().nth(1));
    let listed = second.line_containing("stored: ");
    assert!(listed.contains(&cid) && listed.ends_with("(partial)"), "{listed}");
    let fetched = second.line_containing("fetched");
    assert!(fetched.contains(&cid) && fetched.contains("verified"), "{fetched}");
    let (blocks, stored) = (number_before(&fetched, "blocks"), number_before(&fetched, "already"));
    assert!(stored > 0 && stored < blocks, "killed mid-fetch, so part was stored: {fetched}");
    assert_eq!(stored, committed, "every committed block is taken from the store: {fetched}");
    assert_eq!(number_before(&fetched, "duplicate"), 0, "{fetched}");
    second.line_containing("48.0 MiB (complete)");
    drop(second);

    let third = PeerProcess::start(&relay, &["--data-dir", data_dir.to_str().unwrap()]);
    let listed = third.line_containing("stored: ");
    assert!(listed.contains(&cid) && listed.ends_with("48.0 MiB (complete)"), "{listed}");
}

/// A peer says it is up only once its store holds its content: until then it would answer
/// DONT_HAVE for it, and a fetch started at once would leave it out (the relay's seed peers
/// are started the same way before the relay says it is ready).
#[tokio::test(flavor = "multi_thread")]
async fn a_peer_is_up_only_once_its_content_is_stored() {
    let relay = Relay::start(&[]);
    let data_dir = temp_dir("up-when-stored");
    let args = ["--data-dir", data_dir.to_str().unwrap(), "--demo-content", "8MiB"];
    let peer = PeerProcess::start(&relay, &args);
    peer.line_containing("joining room");
    drop(peer); // SIGKILL at once: nothing more gets written.
    let blocks = import_demo(1, 8 << 20).unixfs.blocks.len() as u64;
    assert_eq!(committed_blocks(&data_dir.join("blocks.redb")).await, blocks);
}

/// A relay that goes away mid-fetch and comes back (its identity and port kept) ends nothing:
/// both peers dial it again, meet again in the room, and the fetch goes on where it stopped,
/// taking no block twice.
#[tokio::test(flavor = "multi_thread")]
async fn a_fetch_goes_on_once_a_lost_relay_is_back() {
    let relay_dir = temp_dir("restarting-relay");
    let relay = Relay::start_in(relay_dir.clone(), &[]);
    let port = relay.addr("tcp").iter().find_map(|p| match p {
        libp2p::multiaddr::Protocol::Tcp(port) => Some(port.to_string()),
        _ => None,
    });
    let server = PeerProcess::start(&relay, &["--demo-content", "32MiB", "--content-seed", "8"]);
    let serving = server.line_containing("as UnixFS");
    let cid = serving.split_whitespace().skip_while(|w| *w != "UnixFS").nth(1).unwrap();

    let data_dir = temp_dir("fetch-across-relay-restart");
    let args = ["--data-dir", data_dir.to_str().unwrap(), "--fetch", cid];
    let fetcher = PeerProcess::start(&relay, &args);
    let progress = fetcher.line_containing(" MiB in ");
    assert!(progress.contains("more wanted"), "{progress}");
    relay.stop();
    let _relay = Relay::start_in(relay_dir, &["--tcp-port", &port.unwrap()]);

    let fetched = fetcher.line_containing("fetched");
    assert!(fetched.contains(cid) && fetched.contains("verified"), "{fetched}");
    assert_eq!(number_before(&fetched, "duplicate"), 0, "{fetched}");
}

#[test]
fn a_peer_with_a_bad_relay_address_says_what_is_wrong() {
    let out = Command::new(env!("CARGO_BIN_EXE_syncscope-relay"))
        .args(["peer", "--relay", "/ip4/127.0.0.1/tcp/1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/p2p/<relay peer id>"), "{err}");
}

#[test]
fn a_damaged_store_stops_the_peer_with_a_clear_error_until_it_is_rebuilt() {
    let relay = Relay::start(&[]);
    let data_dir = temp_dir("damaged-store");
    std::fs::write(data_dir.join("blocks.redb"), b"half a database").unwrap();
    let peer = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_syncscope-relay"))
            .args(["peer", "--relay", &relay.addr("tcp").to_string()])
            .args(["--data-dir", data_dir.to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let out = peer(&[]).wait_with_output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("blocks.redb") && err.contains("--rebuild-store"), "{err}");

    let mut rebuilt = peer(&["--rebuild-store"]);
    let mut first = String::new();
    BufReader::new(rebuilt.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.contains("keeping its data in"), "{first}");
    rebuilt.kill().unwrap();
    rebuilt.wait().unwrap();
    assert_eq!(std::fs::read(data_dir.join("blocks.redb.corrupt")).unwrap(), b"half a database");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_reports_its_counters_at_the_interval_it_is_given() {
    let config = NodeConfig::without_relay().with_stats_every(Duration::from_millis(100));
    let mut handle = node::start(config).await.unwrap();
    let until = tokio::time::Instant::now() + Duration::from_secs(1);
    let mut reports = 0;
    while let Ok(event) = tokio::time::timeout_at(until, handle.events.next()).await {
        reports += usize::from(matches!(event.expect("node stopped"), NodeEvent::Stats(_)));
    }
    // 10 at 100 ms; the default second would give 1.
    assert!((5..=11).contains(&reports), "{reports} reports in 1 s at 100 ms");
}
