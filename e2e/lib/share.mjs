// Sharing a file from a page, and reading the relay's counters: what the transfer tests share.
import { expect } from './assert.mjs';

/// In a page: `size` random bytes put into its file input as one picked file; resolves to the
/// bytes' SHA-256 (hex). Random, so that every block differs: repeating data would be stored,
/// and sent, once. Made in the page, so that pages driven over the bare DevTools Protocol (the
/// benches, which have no `setInputFiles`) share the same way as the tests' Playwright pages.
export const pickRandomFile = (size) => `(async () => {
  const bytes = new Uint8Array(${size});
  for (let at = 0; at < bytes.length; at += 65536) crypto.getRandomValues(bytes.subarray(at, at + 65536));
  const files = new DataTransfer();
  files.items.add(new File([bytes], 'random-${size}.bin'));
  const input = document.querySelector('[data-testid="file-input"]');
  input.files = files.files;
  input.dispatchEvent(new Event('change', { bubbles: true }));
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('');
})()`;

/// Shares `bytes` random bytes from `page` (already in its room) and returns the CID and the
/// share link the page shows for it, and the bytes' SHA-256.
export async function shareFile(page, bytes) {
  await page.getByTestId('file-input').waitFor({ state: 'attached', timeout: 30_000 });
  const sha256 = await page.evaluate(pickRandomFile(bytes));
  const shared = page.getByTestId('shared').locator('li').first();
  await shared.waitFor({ timeout: 60_000 });
  const cid = (await shared.locator('code').textContent()).trim();
  const link = await shared.locator('a').getAttribute('href');
  expect(link, 'link to fetch it').toMatch(new RegExp(`fetch=${cid}`));
  return { cid, link, sha256 };
}

const metricsText = async (relay) => (await fetch(new URL('metrics', relay.url))).text();

async function metric(relay, name) {
  const text = await metricsText(relay);
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  if (!m) throw new Error(`no ${name} in the relay's /metrics:\n${text}`);
  return Number(m[1]);
}

/// The bytes the relay has copied through circuits so far (its `/metrics`).
export const relayedBytes = (relay) => metric(relay, 'syncscope_relay_relayed_bytes_total');

/// The pull-sync chunks the relay's seed peers have sent so far, all seeds together.
export async function seedChunksSent(relay) {
  const lines = (await metricsText(relay)).split('\n').filter((l) => l.startsWith('syncscope_seed_pullsync_chunks_sent'));
  return lines.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/// Waits up to 2 s for the relay to hold no circuit.
export async function circuitsClosed(relay) {
  for (const deadline = Date.now() + 2000; Date.now() < deadline;) {
    if ((await metric(relay, 'syncscope_relay_circuits')) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
