//! The link probe in the page: the raw link to the relay, or to the first peer that connects
//! through it, measured with nothing but libp2p's own layers on the way. It is the ceiling a
//! fetch over the same path is compared with.
//!
//! `?probe=relay` or `?probe=peer` measures as soon as that link is up; `?probe-size=` sets how
//! much (default [`DEFAULT_SIZE`]). The button measures the relay link at any time.

use bytesize::ByteSize;
use leptos::prelude::*;
use syncscope_node::net::link_probe::LinkMeasurement;
use syncscope_node::net::PeerId;
use syncscope_node::node::NodeControl;

use crate::config;

/// Enough to see past the first round trips and the multiplexer's window growth.
pub const DEFAULT_SIZE: u64 = 16 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeTarget {
    Relay,
    /// The first peer connected through the relay: the path a fetch from a room member takes.
    Peer,
}

impl ProbeTarget {
    fn label(self) -> &'static str {
        match self {
            Self::Relay => "relay",
            Self::Peer => "peer",
        }
    }
}

type ProbeResult = Result<(ProbeTarget, LinkMeasurement), String>;

#[derive(Clone, Copy)]
pub struct LinkProbe {
    control: RwSignal<Option<(NodeControl, PeerId)>, LocalStorage>,
    /// What `?probe=` asked to measure, until it is measured.
    pending: RwSignal<Option<ProbeTarget>>,
    size: u64,
    running: RwSignal<bool>,
    result: RwSignal<Option<ProbeResult>>,
}

impl LinkProbe {
    /// The probe the page's URL asks for. A malformed parameter shows as the probe's error, in
    /// words, and nothing is measured until the button is pressed.
    pub fn from_url() -> Self {
        let (pending, size, error) = match Self::url_params() {
            Ok((pending, size)) => (pending, size, None),
            Err(e) => (None, DEFAULT_SIZE, Some(Err(e))),
        };
        Self {
            control: RwSignal::new_local(None),
            pending: RwSignal::new(pending),
            size,
            running: RwSignal::new(false),
            result: RwSignal::new(error),
        }
    }

    fn url_params() -> Result<(Option<ProbeTarget>, u64), String> {
        let pending = match config::url_param("probe").as_deref() {
            None => None,
            Some("relay") => Some(ProbeTarget::Relay),
            Some("peer") => Some(ProbeTarget::Peer),
            Some(other) => return Err(format!("?probe={other}: expected relay or peer")),
        };
        let size = match config::url_param("probe-size") {
            None => DEFAULT_SIZE,
            Some(s) => s.parse::<ByteSize>().map_err(|e| format!("?probe-size={s}: {e}"))?.0,
        };
        Ok((pending, size))
    }

    /// The node is connected to `relay`: the relay can be measured now.
    pub fn relay_connected(&self, control: NodeControl, relay: PeerId) {
        self.control.set(Some((control, relay)));
        if self.pending.get_untracked() == Some(ProbeTarget::Relay) {
            self.start(ProbeTarget::Relay, relay);
        }
    }

    /// A peer connected through the relay.
    pub fn peer_connected(&self, peer: PeerId) {
        if self.pending.get_untracked() == Some(ProbeTarget::Peer) {
            self.start(ProbeTarget::Peer, peer);
        }
    }

    fn start(&self, target: ProbeTarget, peer: PeerId) {
        let Some((control, _)) = self.control.get_untracked() else { return };
        if self.running.get_untracked() {
            return;
        }
        self.pending.set(None);
        self.running.set(true);
        let (size, running, result) = (self.size, self.running, self.result);
        leptos::task::spawn_local(async move {
            let measured = control.measure_link(peer, size).await;
            running.set(false);
            result.set(Some(measured.map(|m| (target, m)).map_err(|e| e.to_string())));
        });
    }

    fn measure_relay(&self) {
        if let Some((_, relay)) = self.control.get_untracked() {
            self.start(ProbeTarget::Relay, relay);
        }
    }
}

#[component]
pub fn ProbeLine(probe: LinkProbe) -> impl IntoView {
    let idle = move || probe.control.with(Option::is_some) && !probe.running.get();
    view! {
        <p class="probe">
            <button data-testid="probe-button" disabled=move || !idle() on:click=move |_| probe.measure_relay()>
                {format!("Measure the raw link to the relay ({})", ByteSize(probe.size).display().iec())}
            </button>
            <Show when=move || probe.running.get()>
                <span class="muted">" measuring…"</span>
            </Show>
        </p>
        {move || probe.result.get().map(|r| match r {
            Ok((target, m)) => view! { <ProbeOutcome target=target measurement=m /> }.into_any(),
            Err(e) => view! {
                <p class="status error" data-testid="probe-error">{format!("link probe failed: {e}")}</p>
            }.into_any(),
        })}
    }
}

#[component]
fn ProbeOutcome(target: ProbeTarget, measurement: LinkMeasurement) -> impl IntoView {
    let secs = measurement.elapsed.as_secs_f64();
    view! {
        // The figures again as attributes, for `cargo xtask bench browser` to read.
        <p
            class="status ok"
            data-testid="probe-done"
            data-target=target.label()
            data-bytes=measurement.bytes.to_string()
            data-elapsed-ms=format!("{:.1}", secs * 1e3)
        >
            {format!(
                "raw link to the {}: {} in {:.2} s ({:.2} MiB/s)",
                target.label(),
                ByteSize(measurement.bytes).display().iec(),
                secs,
                measurement.bytes_per_sec() / f64::from(1 << 20),
            )}
        </p>
    }
}
