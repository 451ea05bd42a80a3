//! The root component and the panels it shows.

use leptos::prelude::*;
use syncscope_node::net::RoomMember;

use crate::chart::Chart;
use crate::config;
use crate::connection::{self, Connection, Status};

#[component]
pub fn App() -> impl IntoView {
    let conn = connection::start();
    view! {
        <header>
            <h1>"syncscope"</h1>
            <p class="tagline">"Bitswap and pull-sync, measured live in your browser"</p>
        </header>
        <main>
            <ConnectionPanel conn=conn />
            <RoomPanel conn=conn />
        </main>
    }
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".into())
}

#[component]
fn ConnectionPanel(conn: Connection) -> impl IntoView {
    let status_text = move || match conn.status.get() {
        Status::Loading => "loading the relay's address…".to_string(),
        Status::Connecting => "connecting to the relay…".to_string(),
        Status::Connected => "connected to the relay".to_string(),
        Status::Failed(why) => format!("error: {why}"),
    };
    let status_class = move || match conn.status.get() {
        Status::Connected => "status ok",
        Status::Failed(_) => "status error",
        _ => "status pending",
    };
    view! {
        <section class="panel" aria-label="connection">
            <h2>"Connection"</h2>
            <p class=status_class data-testid="status">{status_text}</p>
            <dl>
                <dt>"This node"</dt>
                <dd data-testid="own-peer-id">{move || or_dash(conn.own_peer_id.get())}</dd>
                <dt>"Relay"</dt>
                <dd data-testid="relay-peer-id">{move || or_dash(conn.relay_peer_id.get())}</dd>
                <dt>"Transport"</dt>
                <dd data-testid="transport">{move || or_dash(conn.transport.get().map(String::from))}</dd>
                <dt>"Ping RTT"</dt>
                <dd data-testid="rtt">
                    {move || or_dash(conn.rtt.get().map(|d| format!("{:.1} ms", d.as_secs_f64() * 1e3)))}
                </dd>
                <dt>"Reachable"</dt>
                <dd data-testid="reachable">
                    {move || if conn.reachable.get() { "yes, through the relay" } else { "not yet" }}
                </dd>
            </dl>
            <Chart
                title="Ping round trip to the relay"
                unit="ms"
                file="relay-rtt"
                series=Signal::derive(move || vec![conn.rtt_history.get()])
            />
            <Show when=move || conn.notice.get().is_some()>
                <p class="notice" data-testid="notice">{move || conn.notice.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}

#[component]
fn RoomPanel(conn: Connection) -> impl IntoView {
    let link = move || conn.room.get().map(|r| config::share_link(&r)).unwrap_or_default();
    view! {
        <section class="panel" aria-label="room">
            <h2>"Room " <span data-testid="room">{move || or_dash(conn.room.get())}</span></h2>
            <p class="share">
                "Share this link to bring others into the room: "
                <a data-testid="share-link" href=link>{link}</a>
            </p>
            <p data-testid="member-count">
                {move || match conn.members.get().len() {
                    0 => "no one else is here yet".to_string(),
                    1 => "1 other peer".to_string(),
                    n => format!("{n} other peers"),
                }}
            </p>
            <ul class="members" data-testid="members">
                <For each=move || conn.members.get() key=|m| m.peer let:member>
                    <MemberRow member=member />
                </For>
            </ul>
        </section>
    }
}

#[component]
fn MemberRow(member: RoomMember) -> impl IntoView {
    let kind = if member.agent.contains("(browser)") {
        "browser"
    } else if member.agent.contains("(native)") {
        "native"
    } else {
        "peer"
    };
    view! {
        <li data-testid="member" data-peer=member.peer.to_string()>
            <span class=format!("badge {kind}")>{kind}</span>
            <code>{member.peer.to_string()}</code>
        </li>
    }
}
