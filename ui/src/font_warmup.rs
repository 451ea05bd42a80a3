//! A hidden sample of each text style that the page first shows once its node is at work, laid
//! out while the page loads.
//!
//! Chromium on Linux asks its browser process for the render style of each new font and size
//! (`WebSandboxSupportLinux::GetWebFontRenderStyleForStrike`), and the page's main thread waits
//! for the answer. Room members appear as the node connects, and a fetch's row in the stored
//! table as it starts; by then the browser process is busy with the page's network and
//! IndexedDB. There such a question held the main thread 77-266 ms (Chrome's traces of pages
//! opened from a share link), between the connection and the fetch's first byte. At load the same
//! questions took 0.4-5 ms each.
//!
//! The samples use the classes of what they stand for, so the stylesheet stays their one source.
//! The charts' labels need none: a chart without samples writes in their font (`chart.rs`).

use leptos::prelude::*;

#[component]
pub fn FontWarmup() -> impl IntoView {
    view! {
        <div class="font-warmup" aria-hidden="true">
            <ul class="members">
                <li><span class="badge native">"native"</span><code>"12D3KooW"</code></li>
            </ul>
            <table class="stored">
                <thead><tr><th>"name"</th></tr></thead>
                <tbody><tr><td>"0"</td></tr></tbody>
            </table>
        </div>
    }
}
