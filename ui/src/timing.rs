//! Marks on the page's Performance timeline (`syncscope:<step>`), so that a load can be taken
//! apart step by step in DevTools or by the browser bench.

/// Marks `step` now and returns when, in milliseconds since the page's navigation started (the
/// timeline's zero); a browser without the Performance API has no mark and no time.
pub fn mark(step: &str) -> Option<f64> {
    let performance = web_sys::window()?.performance()?;
    let _ = performance.mark(&format!("syncscope:{step}"));
    Some(performance.now())
}
