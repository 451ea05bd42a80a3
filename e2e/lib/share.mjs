// Sharing a file from a page, and reading the relay's counters: what the transfer tests share.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from './assert.mjs';

/// Shares `bytes` random bytes from `page` (already in its room) and returns the CID and the
/// share link the page shows for it, and the bytes' SHA-256. Random, so that every block differs: repeating data would be
/// stored, and sent, once.
export async function shareFile(page, bytes) {
  const file = join(tmpdir(), `syncscope-e2e-${Date.now()}.bin`);
  const content = randomBytes(bytes);
  writeFileSync(file, content);
  await page.getByTestId('file-input').setInputFiles(file);
  const shared = page.getByTestId('shared').locator('li').first();
  await shared.waitFor({ timeout: 60_000 });
  const cid = (await shared.locator('code').textContent()).trim();
  const link = await shared.locator('a').getAttribute('href');
  expect(link, 'link to fetch it').toMatch(new RegExp(`fetch=${cid}`));
  return { cid, link, sha256: createHash('sha256').update(content).digest('hex') };
}

async function metric(relay, name) {
  const text = await (await fetch(new URL('metrics', relay.url))).text();
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  if (!m) throw new Error(`no ${name} in the relay's /metrics:\n${text}`);
  return Number(m[1]);
}

/// The bytes the relay has copied through circuits so far (its `/metrics`).
export const relayedBytes = (relay) => metric(relay, 'syncscope_relay_relayed_bytes_total');

/// Waits up to 2 s for the relay to hold no circuit.
export async function circuitsClosed(relay) {
  for (const deadline = Date.now() + 2000; Date.now() < deadline;) {
    if ((await metric(relay, 'syncscope_relay_circuits')) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
