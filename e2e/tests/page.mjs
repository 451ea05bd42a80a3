// The page itself: its wasm arrives compressed when the browser accepts it, and the hashed assets
// are cached for good while the page that names them is revalidated; a browser that cannot run
// it is told why.
import { expect } from '../lib/assert.mjs';

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
