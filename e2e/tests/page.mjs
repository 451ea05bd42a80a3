// The page itself: its wasm arrives compressed when the browser accepts it, and the hashed assets
// are cached for good while the page that names them is revalidated; a browser that cannot run
// it is told why; it lays out every text style it will need while it loads.
import { expect } from '../lib/assert.mjs';

/// Each text style on the page (family, size in screen pixels, weight, style), with an example.
/// An SVG's text counts at its scale on the screen, as Chromium lays it out.
function textStyles() {
  const styles = {};
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text; (text = walk.nextNode());) {
    if (!text.nodeValue.trim()) continue;
    const element = text.parentElement;
    const css = getComputedStyle(element);
    const scale = element.closest('svg')?.getScreenCTM();
    const px = parseFloat(css.fontSize) * (scale ? Math.hypot(scale.a, scale.b) : 1);
    const key = `${css.fontFamily} ${px.toFixed(2)}px ${css.fontWeight} ${css.fontStyle}`;
    styles[key] ??= `${element.tagName.toLowerCase()} "${text.nodeValue.trim().slice(0, 30)}"`;
  }
  return styles;
}

export default {
  'the page wasm is served compressed and cached by its hashed name': async ({ page, relay }) => {
    const wasm = page.waitForResponse((r) => r.url().endsWith('.wasm'));
    const index = await page.goto(relay.url);
    const response = await wasm;
    const accepted = (await response.request().allHeaders())['accept-encoding'] ?? '';
    const encoding = response.headers()['content-encoding'];
    const wanted = accepted.includes('br') ? 'br' : 'gzip';
    expect(encoding, `content-encoding (the browser accepts "${accepted}")`).toBe(wanted);
    expect(response.headers()['cache-control'], 'wasm cache-control').toBe('public, max-age=31536000, immutable');
    expect(index.headers()['cache-control'], 'index cache-control').toBe('no-cache');
    const sizes = await response.request().sizes();
    const raw = (await response.body()).length;
    console.log(`     wasm: ${raw} bytes, ${sizes.responseBodySize} on the wire (${encoding})`);
    expect(sizes.responseBodySize, 'bytes on the wire below the raw size').toBeAtMost(raw / 2);
  },

  // Chromium asks its browser process for each new text style's render settings and waits: a style
  // first shown as the node connects held the page 80-180 ms while the browser was busy with its
  // network (ui/src/font_warmup.rs). The styles are taken as the page connects, and again once
  // a share link's fetch is done and stored.
  'every text style the page shows once connected was laid out while it loaded': async ({ page, relay }) => {
    await page.addInitScript(`document.addEventListener('DOMContentLoaded', () => {
      const connected = new MutationObserver(() => {
        if (!document.querySelector('[data-testid="status"][data-connected-after-ms]')) return;
        connected.disconnect();
        window.stylesAtConnection = (${textStyles})();
      });
      connected.observe(document, { subtree: true, childList: true, attributes: true });
    })`);
    await page.goto(relay.shareLink.replace(/^http:\/\/[^/]+\//, relay.url));
    await page.getByTestId('fetch-done').waitFor({ timeout: 60_000 });
    await page.locator('[data-testid="stored-row"][data-complete="true"]').waitFor({ timeout: 10_000 });
    await page.getByTestId('member').first().waitFor();
    const atConnection = await page.evaluate(() => window.stylesAtConnection);
    const later = Object.entries(await page.evaluate(textStyles)).filter(([style]) => !(style in atConnection));
    expect(later.map(([style, example]) => `${style}: ${example}`).join('; '), 'text styles first shown after the connection').toBe('');
  },

  // A browser without WebAssembly SIMD cannot compile the page's wasm; here its validator says
  // no and the wasm never arrives, as the compile would fail there. Its own page (not the
  // test's), whose errors are not checked: the wasm's load fails on purpose.
  'a browser without WebAssembly SIMD is told so in words': async ({ openPage, relay }) => {
    const { page, close } = await openPage();
    try {
      await page.addInitScript(() => { WebAssembly.validate = () => false; });
      await page.route(/\.wasm$/, (route) => route.abort());
      await page.goto(relay.url);
      const note = page.getByTestId('unsupported');
      await note.waitFor({ timeout: 10_000 });
      expect(await note.textContent(), 'the note').toMatch(/needs a browser with WebAssembly SIMD/);
    } finally {
      await close();
    }
  },
};
