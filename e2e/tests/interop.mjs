// The page against peers someone else wrote: a Helia 7 node (interop/helia), dialled with ?peer=
// over WebSocket, as the interop matrix's browser row; and a js-libp2p page with @libp2p/webrtc,
// reached browser to browser over direct WebRTC through our relay, each side dialling once.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { start } from '../../interop/lib/procs.mjs';
import { expect, screenshot } from '../lib/assert.mjs';
import { startBrowserPeer } from '../lib/browser_peer.mjs';
import { shareFile } from '../lib/share.mjs';

const DIRECT = 'direct (WebRTC)';
// More than one 256 KiB leaf, so that the file is a root and its leaves.
const FILE_BYTES = 600_000;

const heliaDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'interop', 'helia');

export default {
  'the page fetches 4 MiB from a Helia node it dials with ?peer= over WebSocket': async ({ page, relay }) => {
    const file = join(tmpdir(), `syncscope-e2e-helia-${Date.now()}.bin`);
    writeFileSync(file, randomBytes(4 << 20));
    const helia = start('helia', process.execPath, [
      '--experimental-websocket', '--import', './polyfill.mjs', 'helia-peer.mjs',
      'serve', '--file', file, '--listen', '/ip4/127.0.0.1/tcp/0/ws',
    ], { cwd: heliaDir });
    try {
      const ready = await helia.waitForEvent('ready');
      const addr = ready.addrs.find((a) => a.includes('/ws/'));
      await page.goto(`${relay.url}?room=helia-${Date.now()}&transport=ws&peer=${encodeURIComponent(addr)}&fetch=${ready.cid}`);
      const done = page.getByTestId('fetch-done');
      await done.waitFor({ timeout: 60_000 });
      expect(await done.getAttribute('data-bytes'), 'bytes').toBe(String(4 << 20));
      expect(await done.getAttribute('data-peers'), 'the Helia node sent the blocks').toBe('1');
      expect(await done.textContent(), 'outcome').toMatch(new RegExp(`fetched and verified ${ready.cid}: 4.00 MiB`));
      const listed = page.locator(`[data-testid="outsider"][data-peer="${ready.peer}"]`);
      await listed.waitFor({ timeout: 10_000 });
      expect(await listed.getAttribute('data-kind'), 'listed as an IPFS peer').toBe('ipfs');
      await screenshot(page, 'fetched-from-helia');
    } finally {
      await helia.stop();
    }
  },

  'our page dials a js-libp2p page at its /webrtc address and fetches from it over direct WebRTC': async ({ page, relay, openPage }) => {
    const js = await openPage();
    try {
      const peer = await startBrowserPeer(js.page, relay);
      const file = await js.page.evaluate((size) => window.browserPeer.add(size), FILE_BYTES);
      await page.goto(`${relay.url}?room=js-${Date.now()}&transport=ws&peer=${encodeURIComponent(peer.addrs.find((a) => a.includes('/ws/')))}`);
      const outsider = page.locator(`[data-testid="outsider"][data-peer="${peer.peer}"]`);
      await outsider.locator(`[data-testid="peer-link"][data-via="${DIRECT}"]`).waitFor({ timeout: 20_000 })
        .catch(async () => { throw new Error(`never direct to the js-libp2p page: ${await outsider.textContent().catch(() => 'not listed')}`); });
      expect(await outsider.getAttribute('data-kind'), 'listed as an IPFS peer').toBe('ipfs');
      await page.getByTestId('cid-input').fill(file.cid);
      await page.getByTestId('fetch-button').click();
      const done = page.getByTestId('fetch-done');
      await done.waitFor({ timeout: 30_000 });
      expect(await done.getAttribute('data-bytes'), 'bytes').toBe(String(FILE_BYTES));
      expect(await done.getAttribute('data-peers'), 'the js-libp2p page sent the blocks').toBe('1');
      const ours = await page.getByTestId('own-peer-id').textContent();
      const seen = await js.page.evaluate(() => window.browserPeer.connections());
      const direct = seen.filter((c) => c.peer === ours && c.addr.includes('/webrtc') && c.status === 'open');
      expect(direct.length, `a direct connection on the js side, of ${JSON.stringify(seen)}`).toBe(1);
      await screenshot(page, 'fetched-from-js-libp2p-over-webrtc');
    } finally {
      await js.close();
    }
  },

  // On a relay whose circuits carry a limit: js-libp2p takes such a circuit for a limited
  // connection, and Helia counts our page as a Bitswap peer only once identify over the direct
  // WebRTC connection has told it our protocols.
  'a js-libp2p page dials our page at its /webrtc address and fetches from it over direct WebRTC': async ({ page, openPage, startRelay }) => {
    const relay = await startRelay({ args: ['--seed-peers', '0', '--circuit-duration', '600'] });
    const js = await openPage();
    try {
      await page.goto(`${relay.url}?room=js-${Date.now()}&transport=ws`);
      await page.getByTestId('reachable').filter({ hasText: 'yes' }).waitFor({ timeout: 20_000 });
      const { cid, sha256 } = await shareFile(page, FILE_BYTES);
      const ours = await page.getByTestId('own-peer-id').textContent();
      const ws = relay.addrs.find((a) => a.includes('/ws/'));
      const peer = await startBrowserPeer(js.page, relay);
      const got = await js.page.evaluate(([addr, c]) => window.browserPeer.fetch(addr, c),
        [`${ws}/p2p-circuit/webrtc/p2p/${ours}`, cid]);
      expect(got.dialled.addr, 'the js-libp2p page dialled over WebRTC').toMatch(/\/p2p-circuit\/webrtc\/p2p\//);
      expect(got.dialled.limited, 'a direct connection, not the limited circuit').toBe(false);
      expect(got.bytes, 'bytes').toBe(FILE_BYTES);
      expect(got.sha256, 'the file the js-libp2p page put together').toBe(sha256);
      const over = Object.keys(got.blocksByConnection);
      expect(over.length > 0 && over.every((a) => a.includes('/webrtc')), `blocks came over WebRTC: ${JSON.stringify(got.blocksByConnection)}`).toBe(true);
      await page.locator(`[data-testid="outsider"][data-peer="${peer.peer}"] [data-testid="peer-link"][data-via="${DIRECT}"]`)
        .waitFor({ timeout: 10_000 });
      await screenshot(page, 'served-a-js-libp2p-page-over-webrtc');
    } finally {
      await js.close();
      await relay.stop({ leaving: page });
    }
  },
};
