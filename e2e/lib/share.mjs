// Sharing a file from a page, and reading the relay's counters: what the transfer tests share.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from './assert.mjs';

/// Shares `bytes` bytes of patterned data from `page` (already in its room) and returns the CID
/// and the share link the page shows for it.
export async function shareFile(page, bytes) {
  const file = join(tmpdir(), `syncscope-e2e-${Date.now()}.bin`);
  writeFileSync(file, Buffer.alloc(bytes, 7).map((_, i) => (i * 31) & 0xff));
  await page.getByTestId('file-input').setInputFiles(file);
  const shared = page.getByTestId('shared').locator('li').first();
  await shared.waitFor({ timeout: 60_000 });
  const cid = (await shared.locator('code').textContent()).trim();
  const link = await shared.locator('a').getAttribute('href');
  expect(link, 'link to fetch it').toMatch(new RegExp(`fetch=${cid}`));
  return { cid, link };
}

/// The bytes the relay has copied through circuits so far (its `/metrics`).
export async function relayedBytes(relay) {
  const text = await (await fetch(new URL('metrics', relay.url))).text();
  const m = /^syncscope_relay_relayed_bytes_total (\d+)/m.exec(text);
  if (!m) throw new Error(`no syncscope_relay_relayed_bytes_total in the relay's /metrics:\n${text}`);
  return Number(m[1]);
}
