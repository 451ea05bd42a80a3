// The served page joins the network: it reaches the relay, shows both peer ids, the transport in
// use and a live ping round trip.
import { readFile } from 'node:fs/promises';

import { expect, screenshot } from '../lib/assert.mjs';

/// The CSV that the chart `testId`'s export button downloads.
async function chartCsv(page, testId) {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.locator(`[data-testid="${testId}"] button`, { hasText: 'CSV' }).click(),
  ]);
  return readFile(await download.path(), 'utf8');
}

async function connects({ page, relay }, transport, expectedLabel) {
  const query = transport ? `?transport=${transport}` : '';
  await page.goto(relay.url + query);
  await page.getByTestId('status').filter({ hasText: 'connected to the relay' }).waitFor({ timeout: 30_000 });
  const config = await (await fetch(relay.url + 'config.json')).json();
  expect(await page.getByTestId('relay-peer-id').textContent(), 'relay peer id').toBe(config.peer_id);
  expect(await page.getByTestId('own-peer-id').textContent(), 'own peer id').toMatch(/^12D3KooW/);
  expect(await page.getByTestId('transport').textContent(), 'transport').toBe(expectedLabel);
  await page.getByTestId('rtt').filter({ hasText: / ms$/ }).waitFor({ timeout: 15_000 });
  // The RTT series is drawn in the first palette colour once two pings are in.
  await page.locator('[data-testid="relay-rtt"] svg polyline[stroke="#58A6FF"]').waitFor({ state: 'attached', timeout: 10_000 });
  const csv = await chartCsv(page, 'relay-rtt');
  expect(csv.split('\n')[0], 'CSV header').toBe('seconds,relay RTT');
  expect(csv.trim().split('\n').length, 'CSV rows').toBeAtLeast(2);
  await screenshot(page, `connect-${transport ?? 'default'}`);
}

export default {
  'page connects to the relay over WebRTC-direct by default': (ctx) => connects(ctx, null, 'WebRTC-direct'),
  'page connects to the relay over WebSocket when asked': (ctx) => connects(ctx, 'ws', 'WebSocket'),

  'the link probe measures the raw link to a seed through the circuit and to the relay': async ({ page, relay }) => {
    await page.goto(`${relay.url}?transport=ws&probe=peer&probe-size=3MiB`);
    const done = page.getByTestId('probe-done');
    await done.filter({ hasText: 'raw link to the peer: 3.0 MiB' }).waitFor({ timeout: 30_000 });
    expect(Number(await done.getAttribute('data-bytes')), 'bytes through the circuit').toBe(3 << 20);
    expect(Number(await done.getAttribute('data-elapsed-ms')), 'elapsed ms').toBeAtLeast(0.1);
    await page.getByTestId('probe-button').click();
    await done.filter({ hasText: 'raw link to the relay: 3.0 MiB' }).waitFor({ timeout: 30_000 });
    expect(await done.getAttribute('data-target'), 'measured target').toBe('relay');
    await screenshot(page, 'link-probe');
  },

  // The relay sends as fast as WebRTC-direct carries it while the page reads between other work:
  // messages that arrive faster than they are read must wait, not reset the stream
  // (vendor/libp2p-webrtc-websys), and the relay's bursts must not overflow the browser's UDP
  // buffer (vendor/webrtc-sctp).
  'the link probe carries 32 MiB from the relay over WebRTC-direct': async ({ page, relay }) => {
    await page.goto(`${relay.url}?transport=webrtc-direct&probe=relay&probe-size=32MiB`);
    const done = page.getByTestId('probe-done');
    await page.locator('[data-testid="probe-done"], [data-testid="probe-error"]').first().waitFor({ timeout: 60_000 });
    if (await page.getByTestId('probe-error').count()) throw new Error(await page.getByTestId('probe-error').textContent());
    expect(Number(await done.getAttribute('data-bytes')), 'bytes from the relay').toBe(32 << 20);
  },

  'the charts sample as often as ?sample= asks, and an interval out of range is reported in words': async ({ page, relay }) => {
    await page.goto(`${relay.url}?transport=ws&sample=250ms`);
    await page.getByTestId('status').filter({ hasText: 'connected to the relay' }).waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('sampling').textContent(), 'sampling').toMatch(/sampled every 250 ms/);
    await page.waitForTimeout(2_000);
    const rows = (await chartCsv(page, 'throughput')).trim().split('\n').slice(1);
    const seconds = rows.map((row) => Number(row.split(',')[0]));
    // Once a second would give 2 or 3 rows by now.
    expect(seconds.length, 'samples in the CSV').toBeAtLeast(8);
    const gaps = seconds.slice(1).map((t, i) => t - seconds[i]);
    expect(Math.max(...gaps), 'longest gap between samples, s').toBeAtMost(0.6);

    await page.goto(`${relay.url}?transport=ws&sample=5ms`);
    await page.getByTestId('status').filter({ hasText: 'error' }).waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('status').textContent(), 'status').toMatch(/\?sample=5ms: expected an interval from 100 ms to 60 s/);
    expect(await page.getByTestId('sampling').textContent(), 'sampling').toMatch(/^Nothing is sampled: \?sample=5ms: expected/);
  },

  'a malformed probe parameter is reported in words': async ({ page, relay }) => {
    await page.goto(`${relay.url}?transport=ws&probe=moon`);
    const error = page.getByTestId('probe-error');
    await error.waitFor({ timeout: 15_000 });
    expect(await error.textContent(), 'error').toMatch(/\?probe=moon: expected relay or peer/);
  },

  // The page must not wait for its next ping to find out: a closed WebSocket wakes its readers.
  // Its own page (not the test's), whose errors are not checked: it dials the stopped relay again.
  'the page on WebSocket sees at once that the relay has gone': async ({ openPage, startRelay }) => {
    const relay = await startRelay({ args: ['--seed-peers', '0'] });
    const { page, close } = await openPage();
    try {
      await page.goto(`${relay.url}?transport=ws`);
      const status = page.getByTestId('status');
      await status.filter({ hasText: 'connected to the relay' }).waitFor({ timeout: 30_000 });
      await relay.stop();
      const stopped = Date.now();
      await status.filter({ hasNotText: 'connected to the relay' }).waitFor({ timeout: 10_000 });
      const noticedMs = Date.now() - stopped;
      console.log(`     the page noticed ${noticedMs} ms after the relay's process ended: ${await status.textContent()}`);
      expect(noticedMs, 'ms from the relay ending to the page saying so').toBeAtMost(500);
    } finally {
      await close();
      await relay.stop();
    }
  },
};
