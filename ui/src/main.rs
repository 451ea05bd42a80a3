//! Entry point of the browser app: logging, panic messages, then the root component.

use syncscope_ui::timing;

fn main() {
    timing::mark("wasm-started");
    console_error_panic_hook::set_once();
    syncscope_ui::logging::init();
    leptos::mount::mount_to_body(syncscope_ui::App);
    timing::mark("mounted");
}
