//! The root component.

use leptos::prelude::*;

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
        </main>
    }
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
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "—".into());
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
            </dl>
        </section>
    }
}
