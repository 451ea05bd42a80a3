// The page itself: its wasm arrives compressed when the browser accepts it, and the hashed assets
// are cached for good while the page that names them is revalidated.
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
};
