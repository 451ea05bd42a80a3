// The page against a peer someone else wrote: a Helia 7 node (interop/helia), dialled with
// ?peer= over WebSocket, as the interop matrix's browser row.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { start } from '../../interop/lib/procs.mjs';
import { expect, screenshot } from '../lib/assert.mjs';

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
};
