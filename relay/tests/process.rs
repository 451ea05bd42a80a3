//! The relay as a process: identity across restarts, errors for bad flags and data directories,
//! `/config.json`, metrics, and clean shutdown.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{http_get, metric, node, relay_command, temp_dir, wait_for, Relay};
use libp2p::multiaddr::Protocol;
use syncscope_node::node::NodeEvent;
use syncscope_node::{PageConfig, RelayTransport};

fn certhash(relay: &Relay) -> String {
    let addr = relay.addr("webrtc-direct");
    addr.iter()
        .find_map(|p| match p {
            Protocol::Certhash(h) => Some(format!("{h:?}")),
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_restart_keeps_the_peer_id_and_certhash() {
    let data = temp_dir("restart");
    let first = Relay::start_in(data.clone(), &[]);
    let (id, hash) = (first.peer_id, certhash(&first));
    first.stop();
    let second = Relay::start_in(data, &[]);
    assert_eq!(second.peer_id, id);
    assert_eq!(certhash(&second), hash);
}

/// Runs the relay with `args` and returns its exit code and stderr.
fn run_failing(cmd: &mut Command) -> (i32, String) {
    let out = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_flags_are_one_clear_line_and_a_failure_exit() {
    let (code, err) = run_failing(&mut relay_command(&temp_dir("flags"), &["--bogus"]));
    assert_eq!(code, 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--bogus") && err.contains("--help"), "{err}");

    let (code, err) =
        run_failing(&mut relay_command(&temp_dir("flags"), &["--room", "no/slashes"]));
    assert_ne!(code, 0);
    assert!(err.contains("room name"), "{err}");
}

#[test]
fn an_unusable_data_directory_is_a_clear_error() {
    let file = temp_dir("not-a-dir").join("file");
    std::fs::write(&file, b"x").unwrap();
    let (code, err) = run_failing(&mut relay_command(&file, &[]));
    assert_ne!(code, 0);
    assert!(err.contains("cannot create data directory"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let mut cmd = relay_command(&temp_dir("port"), &[]);
    cmd.args(["--tcp-port", &port]);
    let (code, err) = run_failing(&mut cmd);
    assert_ne!(code, 0);
    assert!(err.contains("--tcp-port"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_report_connections_reservations_and_rooms() {
    let relay = Relay::start(&[]);
    let mut a = node(&relay, "tcp").await;
    let b = node(&relay, "ws").await;
    a.join_room("metrics").unwrap();
    b.join_room("metrics").unwrap();
    wait_for(
        &mut a,
        Duration::from_secs(5),
        |e| matches!(e, NodeEvent::Room(u) if u.members.len() == 1),
    )
    .await;

    let text = http_get(&relay, "/metrics");
    assert_eq!(
        metric(&text, "syncscope_relay_connections{transport=\"TCP\"}"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(metric(&text, "syncscope_relay_connections{transport=\"WebSocket\"}"), Some(1.0));
    assert_eq!(metric(&text, "syncscope_relay_reservations"), Some(2.0));
    assert_eq!(metric(&text, "syncscope_relay_room_members{room=\"metrics\"}"), Some(2.0));
    assert!(metric(&text, "syncscope_relay_relayed_bytes_total").is_some());
    assert!(text.contains("libp2p_bandwidth"), "libp2p's own metrics are exported too");
    assert_eq!(http_get(&relay, "/healthz"), "ok");
}

#[test]
fn config_json_names_the_relay_its_addresses_and_the_room() {
    let relay = Relay::start(&["--room", "config-test"]);
    let body = http_get(&relay, "/config.json");
    let config: PageConfig =
        serde_json::from_str(&body).expect("/config.json parses as PageConfig");
    assert_eq!(config.peer_id, relay.peer_id.to_string());
    assert_eq!(config.room, "config-test");
    for transport in RelayTransport::ALL {
        let addr = relay.addr(transport.name()).to_string();
        assert!(
            config.addrs.get(&transport).is_some_and(|a| a.contains(&addr)),
            "{addr} in {body}"
        );
    }
}

#[cfg(unix)]
#[test]
fn sigterm_shuts_down_cleanly() {
    let relay = Relay::start(&[]);
    Command::new("kill").args(["-TERM", &relay.pid().to_string()]).status().unwrap();
    let lines: Vec<String> = relay.stderr.iter().take_while(|l| !l.contains("shut down")).collect();
    assert!(lines.iter().any(|l| l.contains("shutting down")), "{lines:?}");
}
