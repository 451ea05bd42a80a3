//! Marks on the page's Performance timeline (`syncscope:<step>`), so that a load can be taken
//! apart step by step in DevTools or by the browser bench.

/// Marks `step` now; a browser without the Performance API just has no mark.
pub fn mark(step: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(&format!("syncscope:{step}"));
    }
}

/// Milliseconds since the page's navigation started (the Performance timeline's zero).
pub fn since_navigation_ms() -> Option<f64> {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now())
}
