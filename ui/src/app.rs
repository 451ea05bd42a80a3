//! The root component and the panels it shows.

use leptos::prelude::*;
use syncscope_node::net::PeerId;
use syncscope_node::node::RoomMember;
use syncscope_node::store::Manifest;

use crate::chart::Chart;
use crate::config;
use crate::connection::{self, Connection, Observers, Status};
use crate::font_warmup::FontWarmup;
use crate::probe::{LinkProbe, ProbeLine};
use crate::rates::RateCharts;
use crate::stored::{Stored, Usage};
use crate::transfers::{Outcome, Transfers};

#[component]
pub fn App() -> impl IntoView {
    let observers = Observers {
        transfers: Transfers::new(config::url_param("fetch"), config::url_param("name")),
        charts: RateCharts::new(),
        probe: LinkProbe::from_url(),
        stored: Stored::new(),
    };
    let conn = connection::start(observers);
    view! {
        <header>
            <h1>"syncscope"</h1>
            <p class="tagline">"Bitswap and pull-sync, measured live in your browser"</p>
        </header>
        <main>
            <ConnectionPanel conn=conn probe=observers.probe />
            <RoomPanel conn=conn />
            <TransferPanel transfers=observers.transfers room=conn.room />
            <StoredPanel stored=observers.stored transfers=observers.transfers room=conn.room />
            <ProtocolPanel charts=observers.charts />
        </main>
        <FontWarmup />
    }
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".into())
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[component]
fn ConnectionPanel(conn: Connection, probe: LinkProbe) -> impl IntoView {
    let status_text = move || match conn.status.get() {
        Status::Loading => "loading the relay's address…".to_string(),
        Status::Connecting => "connecting to the relay…".to_string(),
        // The time to connect belongs to the first connection, not to an error after it.
        Status::Connected => match conn.connected_after_ms.get() {
            Some(ms) => format!("connected to the relay in {ms:.0} ms since the page opened"),
            None => "connected to the relay".to_string(),
        },
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
            <p
                class=status_class
                data-testid="status"
                data-connected-after-ms=move || conn.connected_after_ms.get().map(|ms| format!("{ms:.0}"))
            >
                {status_text}
            </p>
            <dl>
                <dt>"This node"</dt>
                <dd data-testid="own-peer-id">{move || or_dash(conn.own_peer_id.get())}</dd>
                <dt>"Stored in"</dt>
                <dd
                    data-testid="storage"
                    data-blocks-at-start=move || conn.stored_at_start.get().map(|s| s.blocks.to_string())
                    data-chunks-at-start=move || conn.stored_at_start.get().map(|s| s.chunks.to_string())
                >
                    {move || or_dash(conn.storage.get())}
                    {move || conn.stored_at_start.get().filter(|s| s.blocks + s.chunks > 0).map(|s| {
                        format!(
                            ", holding {} ({}) and {} since it started",
                            count(s.blocks as u64, "block"), mib(s.bytes), count(s.chunks as u64, "pull-sync chunk")
                        )
                    })}
                </dd>
                <dt>"Relay"</dt>
                <dd data-testid="relay-peer-id">{move || or_dash(conn.relay_peer_id.get())}</dd>
                <dt>"Transport"</dt>
                <dd data-testid="transport">{move || or_dash(conn.transport.get().map(String::from))}</dd>
                <dt>"Ping RTT"</dt>
                <dd data-testid="rtt">
                    {move || or_dash(conn.rtt.get().map(|d| format!("{:.1} ms", ms(d))))}
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
            <ProbeLine probe=probe />
            <Show when=move || conn.notice.get().is_some()>
                <p class="notice" data-testid="notice">{move || conn.notice.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}

#[component]
fn RoomPanel(conn: Connection) -> impl IntoView {
    let link = move || conn.room.get().map(|r| config::share_link(&r, None)).unwrap_or_default();
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
                    n => count(n as u64, "other peer"),
                }}
            </p>
            <ul class="members" data-testid="members">
                // Keyed on the kind too: it arrives by identify after the member, and a row
                // keyed on the peer alone would keep showing the kind it was first drawn with.
                <For each=move || conn.members.get() key=|m| (m.peer, m.kind) let:member>
                    <MemberRow member=member conn=conn />
                </For>
            </ul>
            <Show when=move || !conn.outsiders.get().is_empty()>
                <p>"Also connected, outside the room:"</p>
                <ul class="members" data-testid="outsiders">
                    <For each=move || conn.outsiders.get() key=|o| o.peer let:outsider>
                        <li data-testid="outsider" data-peer=outsider.peer.to_string() data-kind=outsider.kind.label()>
                            <span class=format!("badge {}", outsider.kind.label())>{outsider.kind.label()}</span>
                            <code>{outsider.peer.to_string()}</code>
                            <span class="muted">{format!(" {}", outsider.agent)}</span>
                            <LinkNote peer=outsider.peer conn=conn />
                        </li>
                    </For>
                </ul>
            </Show>
        </section>
    }
}

#[component]
fn MemberRow(member: RoomMember, conn: Connection) -> impl IntoView {
    let kind = member.kind.label();
    let peer = member.peer;
    view! {
        <li data-testid="member" data-peer=peer.to_string() data-kind=kind>
            <span class=format!("badge {kind}")>{kind}</span>
            <code>{peer.to_string()}</code>
            <LinkNote peer=peer conn=conn />
        </li>
    }
}

/// How this page reaches `peer` ("direct (WebRTC)", "relayed (circuit)", …), and why not direct.
#[component]
fn LinkNote(peer: PeerId, conn: Connection) -> impl IntoView {
    let link = move || conn.links.with(|all| all.get(&peer).cloned());
    move || {
        link().map(|link| view! {
            <span class="muted" data-testid="peer-link" data-via=link.via>{format!(" {}", link.via)}</span>
            {link.not_direct.map(|why| view! { <span class="muted" data-testid="peer-not-direct">{format!(": {why}")}</span> })}
            {link.rtt.map(|rtt| {
                let rtt = format!("{:.1}", ms(rtt));
                view! { <span class="muted" data-testid="peer-rtt" data-ms=rtt.clone()>{format!(", ping {rtt} ms")}</span> }
            })}
        })
    }
}

#[component]
fn StoredPanel(
    stored: Stored,
    transfers: Transfers,
    room: RwSignal<Option<String>>,
) -> impl IntoView {
    view! {
        <section class="panel" aria-label="stored here">
            <h2>"Stored here"</h2>
            <p class="muted" data-testid="storage-usage">{move || stored.usage.get().map(usage_line)}</p>
            <label class="share-file">
                "Import a CAR file (kubo's ipfs dag export, Helia): "
                <input type="file" accept=".car" data-testid="car-input" on:change=move |ev| read_chosen_file(ev, move |name, read| match read {
                    Ok(data) => stored.import_car(&name, data),
                    Err(e) => stored.error.set(Some(e)),
                }) />
            </label>
            {move || stored.error.get().map(|e| view! { <p class="status error">{e}</p> })}
            {move || stored.removed.get().map(|r| view! { <p class="muted" data-testid="stored-removed">{r}</p> })}
            <Show
                when=move || !stored.manifests.get().is_empty()
                fallback=|| view! { <p class="muted">"nothing yet: fetch or share a file"</p> }
            >
                <table class="stored" data-testid="stored">
                    <thead><tr><th>"name"</th><th>"size"</th><th>"state"</th><th>"since"</th><th></th></tr></thead>
                    <tbody>
                        <For each=move || stored.manifests.get() key=|m| (m.root, m.complete, m.size) let:manifest>
                            <StoredRow manifest=manifest stored=stored transfers=transfers room=room />
                        </For>
                    </tbody>
                </table>
            </Show>
        </section>
    }
}

#[component]
fn StoredRow(
    manifest: Manifest,
    stored: Stored,
    transfers: Transfers,
    room: RwSignal<Option<String>>,
) -> impl IntoView {
    let root = manifest.root;
    let cid = root.to_string();
    let name = if manifest.name.is_empty() { cid.clone() } else { manifest.name.clone() };
    let link = {
        let cid = cid.clone();
        let name = manifest.name.clone();
        move || room.get().map(|r| config::share_link(&r, Some((&cid, &name)))).unwrap_or_default()
    };
    let since = local_time(manifest.since_ms);
    let complete = manifest.complete;
    let resume = StoredValue::new((cid.clone(), manifest.name.clone()));
    view! {
        <tr data-testid="stored-row" data-root=cid.clone() data-complete=complete.to_string()>
            <td title=cid.clone()>{name}</td>
            <td>{if complete { mib(manifest.size) } else { "—".into() }}</td>
            <td>{if complete { "complete" } else { "partial" }}</td>
            <td>{since}</td>
            <td class="actions">
                <Show when=move || complete>
                    <button data-testid="stored-download" on:click=move |_| stored.download(root)>"download"</button>
                    <button data-testid="stored-car" title="the file's blocks as a CARv1 file, for kubo or Helia" on:click=move |_| stored.download_car(root)>"CAR"</button>
                </Show>
                <Show when=move || !complete>
                    <button data-testid="stored-resume" on:click=move |_| resume.with_value(|(cid, name)| transfers.fetch(cid, name))>"resume"</button>
                </Show>
                <a href=link>"share link"</a>
                <button data-testid="stored-remove" on:click=move |_| stored.remove(root)>"remove"</button>
            </td>
        </tr>
    }
}

/// `YYYY-MM-DD HH:MM:SS` in the browser's time zone. Not `toLocaleString`: its first call loads
/// the locale's data, about 100 ms of the main thread, and the list renders as a fetch starts.
fn local_time(ms: u64) -> String {
    let d = js_sys::Date::new(&(ms as f64).into());
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        d.get_full_year(),
        d.get_month() + 1,
        d.get_date(),
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

/// "12.00 MiB used of 1024.00 MiB; persistent: yes".
fn usage_line(usage: Usage) -> String {
    let persistent = match usage.persistent {
        Some(true) => "persistent: yes",
        Some(false) => "persistent: no (the browser may clear it when space runs short)",
        None => "persistent: unknown",
    };
    format!(
        "{} used of {} the browser allows this site; {persistent}",
        mib(usage.used),
        mib(usage.quota)
    )
}

/// `n` and `noun`, plural unless `n` is 1.
fn count(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1 << 20) as f64)
}

#[component]
fn TransferPanel(transfers: Transfers, room: RwSignal<Option<String>>) -> impl IntoView {
    let cid = RwSignal::new(transfers.pending.get_untracked().unwrap_or_default());
    let peer = RwSignal::new(String::new());
    let waiting = move || transfers.pending.get().is_some();
    view! {
        <section class="panel" aria-label="transfers">
            <h2>"Fetch and share"</h2>
            <form class="fetch" on:submit=move |ev| {
                ev.prevent_default();
                transfers.fetch(&cid.get_untracked(), "");
            }>
                <input data-testid="cid-input" placeholder="a UnixFS CID, e.g. bafy…" prop:value=cid
                    on:input=move |ev| cid.set(event_target_value(&ev)) />
                <button type="submit" data-testid="fetch-button">"Fetch over Bitswap"</button>
            </form>
            <form class="fetch" on:submit=move |ev| {
                ev.prevent_default();
                transfers.dial(&peer.get_untracked());
            }>
                <input data-testid="peer-input" placeholder="any libp2p peer, e.g. /ip4/…/tcp/4001/p2p/12D3Koo… (kubo, Helia)" prop:value=peer
                    on:input=move |ev| peer.set(event_target_value(&ev)) />
                <button type="submit" data-testid="dial-button">"Dial"</button>
            </form>
            <Show when=waiting>
                <p class="muted" data-testid="fetch-waiting">"waiting for the room's peers to connect before fetching…"</p>
            </Show>
            {move || transfers.progress.get().map(|p| view! {
                <div class="progress" data-testid="fetch-progress" data-bytes=p.bytes.to_string()>
                    <progress max="1" value=p.fraction()></progress>
                    <span>{format!("{} blocks, {} of {}", p.blocks, mib(p.bytes), p.root)}</span>
                </div>
            })}
            {move || transfers.outcome.get().map(|o| view! { <OutcomeLine outcome=o /> })}
            {move || transfers.error.get().map(|e| view! { <p class="status error" data-testid="transfer-error">{e}</p> })}
            <label class="share-file">
                "Share a file with the room: "
                <input type="file" data-testid="file-input" on:change=move |ev| read_chosen_file(ev, move |name, read| match read {
                    Ok(data) => transfers.share(name, data),
                    Err(e) => transfers.error.set(Some(e)),
                }) />
            </label>
            <ul class="shared" data-testid="shared">
                {move || transfers.shared.get().into_iter().map(|added| {
                    let link = room.get().map(|r| config::share_link(&r, Some((&added.cid.to_string(), &added.name)))).unwrap_or_default();
                    view! {
                        <li>
                            <code>{added.cid.to_string()}</code>
                            {format!(" {} · {} blocks, {} Swarm chunks · ", mib(added.size), added.blocks, added.chunks)}
                            <a href=link.clone()>"link to fetch it"</a>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn OutcomeLine(outcome: Outcome) -> impl IntoView {
    let secs = outcome.elapsed.as_secs_f64().max(1e-6);
    let peer_blocks: Vec<String> = outcome.sources.0.iter().map(|(_, n)| n.to_string()).collect();
    let peer_blocks = peer_blocks.join(",");
    let dup_pct = 100.0 * outcome.duplicate_blocks as f64
        / (outcome.blocks + outcome.duplicate_blocks).max(1) as f64;
    view! {
        // The figures again as attributes, for scripts (`cargo xtask bench browser`) to read.
        <p
            class="status ok"
            data-testid="fetch-done"
            data-elapsed-ms=outcome.elapsed.as_millis().to_string()
            data-bytes=outcome.size.to_string()
            data-blocks=outcome.blocks.to_string()
            data-peers=outcome.sources.peers().to_string()
            data-peer-blocks=peer_blocks
            data-duplicates=outcome.duplicate_blocks.to_string()
            data-from-store=outcome.from_store.to_string()
        >
            {format!(
                "fetched and verified {}: {} in {:.2} s ({:.2} MiB/s), {}{} from {}, {} ({:.1} %)",
                outcome.root, mib(outcome.size), secs, outcome.size as f64 / (1 << 20) as f64 / secs,
                count(outcome.blocks, "block"), already_stored(outcome.from_store), outcome.sources,
                count(outcome.duplicate_blocks, "duplicate block"), dup_pct
            )}
        </p>
    }
}

/// " (40 already stored here)": blocks a fetch took from the page's own store.
fn already_stored(blocks: u64) -> String {
    match blocks {
        0 => String::new(),
        n => format!(" ({n} already stored here)"),
    }
}

/// Reads the file chosen in `ev`'s input, then hands its name and bytes (or why they could not be
/// read, in words) to `done`.
fn read_chosen_file(
    ev: leptos::ev::Event,
    done: impl FnOnce(String, Result<Vec<u8>, String>) + 'static,
) {
    use wasm_bindgen::JsCast;
    let Some(file) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|input| input.files())
        .and_then(|files| files.get(0))
    else {
        return;
    };
    leptos::task::spawn_local(async move {
        let read = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await;
        let read = read
            .map(|buffer| js_sys::Uint8Array::new(&buffer).to_vec())
            .map_err(|e| format!("cannot read {}: {e:?}", file.name()));
        done(file.name(), read);
    });
}

/// What the charts show and how often they are sampled; with a bad `?sample=`, why nothing is
/// (the node does not start, and the status says so too).
fn sampling_words() -> String {
    match config::stats_every_from_url() {
        Ok(every) => format!(
            "Exact differences of the node's counters over each interval, as rates per second, \
             sampled every {} (?sample=250ms samples faster).",
            config::interval_words(every)
        ),
        Err(e) => format!("Nothing is sampled: {e}."),
    }
}

#[component]
fn ProtocolPanel(charts: RateCharts) -> impl IntoView {
    view! {
        <section class="panel" aria-label="protocols">
            <h2>"What the protocols do"</h2>
            <p class="muted" data-testid="sampling">{sampling_words()}</p>
            <div class="charts">
                <Chart title="Data received" unit="MB/s" file="throughput" series=charts.throughput />
                <Chart title="Blocks and chunks received" unit="per second" file="items" series=charts.items />
                <Chart title="Duplicates" unit="% of received" file="duplicates" series=charts.duplicates />
            </div>
        </section>
    }
}
