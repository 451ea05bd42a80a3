// `cargo xtask bench browser`: the browser node measured in real headless Chromium against a
// release relay on loopback whose seed peers serve a demo file. Each run opens fresh browser
// contexts and reads what the page reports: raw-link ceilings (the link probe), Bitswap fetches
// over each transport, page weight, load time and the longest main-thread task. Prints one row
// per case: {case, unit, n, failed, median, min, max}.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

import { launchCdpBrowser } from '../lib/cdp.mjs';
import { cpuSecondsBetween, machineCpuSnapshot, machineSharesBetween } from '../lib/cpu.mjs';
import { startRelay } from '../lib/relay.mjs';
import { seedChunksSent } from '../lib/share.mjs';
import { b2bFetch, dataChannelCeiling } from './b2b.mjs';
import { printProfile, profileFetchAndCeiling } from './profile.mjs';

/// Every case, in the order printed. `step` is the measurement it comes from; `read` takes the
/// case's value from one run's results (undefined: not measured in that run).
const CASES = [
  { name: 'ceiling_ws', unit: 'MB/s', step: ['probe_peer_ws'], read: (r) => mbps(r.probe_peer_ws) },
  { name: 'ceiling_webrtc_direct', unit: 'MB/s', step: ['probe_peer_webrtc-direct'], read: (r) => mbps(r['probe_peer_webrtc-direct']) },
  { name: 'ceiling_ws_no_circuit', unit: 'MB/s', step: ['probe_relay_ws'], read: (r) => mbps(r.probe_relay_ws) },
  { name: 'fetch_ws', unit: 'MB/s', step: ['fetch_ws'], read: (r) => mbps(r.fetch_ws) },
  { name: 'fetch_webrtc_direct', unit: 'MB/s', step: ['fetch_webrtc-direct'], read: (r) => mbps(r['fetch_webrtc-direct']) },
  { name: 'fetch_ws_1seed', unit: 'MB/s', step: ['fetch_ws_1seed'], read: (r) => mbps(r.fetch_ws_1seed) },
  { name: 'fetch_webrtc_direct_1seed', unit: 'MB/s', step: ['fetch_webrtc-direct_1seed'], read: (r) => mbps(r['fetch_webrtc-direct_1seed']) },
  { name: 'fetch_ws_revisit', unit: 'MB/s', step: ['fetch_ws_revisit'], read: (r) => mbps(r.fetch_ws_revisit) },
  { name: 'fetch_ratio_ws', unit: 'ratio', step: ['fetch_ws', 'probe_peer_ws'], read: (r) => ratio(mbps(r.fetch_ws), mbps(r.probe_peer_ws)) },
  { name: 'fetch_ratio_ws_revisit', unit: 'ratio', step: ['fetch_ws_revisit', 'probe_peer_ws'], read: (r) => ratio(mbps(r.fetch_ws_revisit), mbps(r.probe_peer_ws)) },
  // Three seeds against one, in the same run: spreading over more seeds must not cost speed.
  { name: 'fetch_ratio_ws_3seeds_to_1', unit: 'ratio', step: ['fetch_ws', 'fetch_ws_1seed'], read: (r) => ratio(mbps(r.fetch_ws), mbps(r.fetch_ws_1seed)) },
  { name: 'fetch_ratio_webrtc_direct_3seeds_to_1', unit: 'ratio', step: ['fetch_webrtc-direct', 'fetch_webrtc-direct_1seed'], read: (r) => ratio(mbps(r['fetch_webrtc-direct']), mbps(r['fetch_webrtc-direct_1seed'])) },
  { name: 'fetch_ratio_webrtc_direct', unit: 'ratio', step: ['fetch_webrtc-direct', 'probe_peer_webrtc-direct'], read: (r) => ratio(mbps(r['fetch_webrtc-direct']), mbps(r['probe_peer_webrtc-direct'])) },
  { name: 'fetch_dup_pct_ws', unit: '%', step: ['fetch_ws'], read: (r) => r.fetch_ws && (100 * r.fetch_ws.duplicates) / (r.fetch_ws.blocks + r.fetch_ws.duplicates) },
  { name: 'fetch_peers_ws', unit: 'peers', step: ['fetch_ws'], read: (r) => r.fetch_ws && r.fetch_ws.peerBlocks.filter((n) => n >= 0.1 * r.fetch_ws.blocks).length },
  { name: 'longest_task_ms_ws', unit: 'ms', step: ['fetch_ws'], read: (r) => r.fetch_ws?.longestTaskMs },
  // Who works while a fetch or a ceiling's probe runs: the page's main thread (a share of the
  // transfer's time), the relay process with its seed peers and all of the browser's processes
  // (each a share of one core). A transfer whose page is far from busy is waiting on the path,
  // not on the page.
  { name: 'page_busy_pct_ceiling_ws', unit: '%', step: ['probe_peer_ws'], read: (r) => r.probe_peer_ws?.pageBusyPct },
  { name: 'page_busy_pct_ceiling_webrtc_direct', unit: '%', step: ['probe_peer_webrtc-direct'], read: (r) => r['probe_peer_webrtc-direct']?.pageBusyPct },
  { name: 'page_busy_pct_fetch_ws', unit: '%', step: ['fetch_ws'], read: (r) => r.fetch_ws?.pageBusyPct },
  { name: 'page_busy_pct_fetch_webrtc_direct', unit: '%', step: ['fetch_webrtc-direct'], read: (r) => r['fetch_webrtc-direct']?.pageBusyPct },
  { name: 'relay_cpu_pct_fetch_ws', unit: '%', step: ['fetch_ws'], read: (r) => r.fetch_ws?.relayCpuPct },
  { name: 'relay_cpu_pct_fetch_webrtc_direct', unit: '%', step: ['fetch_webrtc-direct'], read: (r) => r['fetch_webrtc-direct']?.relayCpuPct },
  { name: 'browser_cpu_pct_ceiling_ws', unit: '%', step: ['probe_peer_ws'], read: (r) => r.probe_peer_ws?.browserCpuPct },
  { name: 'browser_cpu_pct_fetch_ws', unit: '%', step: ['fetch_ws'], read: (r) => r.fetch_ws?.browserCpuPct },
  { name: 'browser_cpu_pct_ceiling_webrtc_direct', unit: '%', step: ['probe_peer_webrtc-direct'], read: (r) => r['probe_peer_webrtc-direct']?.browserCpuPct },
  { name: 'browser_cpu_pct_fetch_webrtc_direct', unit: '%', step: ['fetch_webrtc-direct'], read: (r) => r['fetch_webrtc-direct']?.browserCpuPct },
  // Whether the machine had a core to spare: a transfer bound by the page's thread alone leaves
  // one, a transfer that every process shares the two cores for does not.
  { name: 'machine_busy_pct_ceiling_ws', unit: '%', step: ['probe_peer_ws'], read: (r) => r.probe_peer_ws?.machineBusyPct },
  { name: 'machine_busy_pct_fetch_ws', unit: '%', step: ['fetch_ws'], read: (r) => r.fetch_ws?.machineBusyPct },
  { name: 'machine_busy_pct_ceiling_webrtc_direct', unit: '%', step: ['probe_peer_webrtc-direct'], read: (r) => r['probe_peer_webrtc-direct']?.machineBusyPct },
  { name: 'machine_busy_pct_fetch_webrtc_direct', unit: '%', step: ['fetch_webrtc-direct'], read: (r) => r['fetch_webrtc-direct']?.machineBusyPct },
  { name: 'machine_steal_pct_fetch_ws', unit: '%', step: ['fetch_ws'], read: (r) => r.fetch_ws?.machineStealPct },
  { name: 'machine_steal_pct_fetch_webrtc_direct', unit: '%', step: ['fetch_webrtc-direct'], read: (r) => r['fetch_webrtc-direct']?.machineStealPct },
  // The same per byte, to set beside relay_cpu_s_per_gb_b2b_*: the relay's cost of each path.
  { name: 'relay_cpu_s_per_gb_fetch_ws', unit: 's/GB', step: ['fetch_ws'], read: (r) => relayCpuPerGb(r.fetch_ws) },
  { name: 'relay_cpu_s_per_gb_fetch_webrtc_direct', unit: 's/GB', step: ['fetch_webrtc-direct'], read: (r) => relayCpuPerGb(r['fetch_webrtc-direct']) },
  // What the page's own messages cost it: each WebSocket send is an IPC to the browser process,
  // which blocks the page for milliseconds now and then on a busy machine.
  { name: 'fetch_ws_page_sends', unit: 'messages', step: ['fetch_ws'], read: (r) => r.fetch_ws?.sends.count },
  { name: 'fetch_ws_page_send_ms', unit: 'ms', step: ['fetch_ws'], read: (r) => r.fetch_ws?.sends.ms },
  { name: 'page_wasm_bytes_on_wire', unit: 'bytes', step: ['fetch_ws'], read: (r) => r.fetch_ws?.wasmOnWire },
  { name: 'load_to_connected_ms_ws', unit: 'ms', step: ['fetch_ws'], read: (r) => r.fetch_ws?.connectedMs },
  { name: 'load_to_connected_ms_webrtc_direct', unit: 'ms', step: ['fetch_webrtc-direct'], read: (r) => r['fetch_webrtc-direct']?.connectedMs },
  { name: 'pullsync_ws', unit: 'MB/s', step: ['pullsync_ws'], read: (r) => mbps(r.pullsync_ws) },
  { name: 'pullsync_chunks_ws', unit: 'chunks', step: ['pullsync_ws'], read: (r) => r.pullsync_ws?.chunks },
  { name: 'page_busy_pct_pullsync_ws', unit: '%', step: ['pullsync_ws'], read: (r) => r.pullsync_ws?.pageBusyPct },
  { name: 'relay_cpu_pct_pullsync_ws', unit: '%', step: ['pullsync_ws'], read: (r) => r.pullsync_ws?.relayCpuPct },
  { name: 'pullsync_ratio_ws', unit: 'ratio', step: ['pullsync_ws', 'probe_peer_ws'], read: (r) => ratio(mbps(r.pullsync_ws), mbps(r.probe_peer_ws)) },
  { name: 'fetch_ws_memory', unit: 'MB/s', step: ['fetch_ws_memory'], read: (r) => mbps(r.fetch_ws_memory) },
  { name: 'fetch_ratio_ws_to_memory', unit: 'ratio', step: ['fetch_ws', 'fetch_ws_memory'], read: (r) => ratio(mbps(r.fetch_ws), mbps(r.fetch_ws_memory)) },
  { name: 'idb_put_4k_batched', unit: 'chunks/s', step: ['idb_put_4k_batched'], read: (r) => perSecond(r.idb_put_4k_batched) },
  { name: 'idb_put_4k_per_tx', unit: 'chunks/s', step: ['idb_put_4k_per_tx'], read: (r) => perSecond(r.idb_put_4k_per_tx) },
  { name: 'idb_put_256k_batched', unit: 'MB/s', step: ['idb_put_256k_batched'], read: (r) => mbps(r.idb_put_256k_batched) },
  { name: 'resume_refetched_blocks', unit: 'blocks', step: ['resume'], read: (r) => r.resume?.refetched },
  { name: 'fetch_ratio_webrtc_direct_to_ws', unit: 'ratio', step: ['fetch_webrtc-direct', 'fetch_ws'], read: (r) => ratio(mbps(r['fetch_webrtc-direct']), mbps(r.fetch_ws)) },
  // Browser to browser: 16 MiB, whatever --seed-content says.
  { name: 'ceiling_b2b_datachannel', unit: 'MB/s', step: ['b2b_datachannel'], read: (r) => mbps(r.b2b_datachannel) },
  { name: 'b2b_circuit', unit: 'MB/s', step: ['b2b_circuit'], read: (r) => mbps(r.b2b_circuit) },
  { name: 'b2b_webrtc', unit: 'MB/s', step: ['b2b_webrtc'], read: (r) => mbps(r.b2b_webrtc) },
  { name: 'b2b_webrtc_ratio_to_datachannel', unit: 'ratio', step: ['b2b_webrtc', 'b2b_datachannel'], read: (r) => ratio(mbps(r.b2b_webrtc), mbps(r.b2b_datachannel)) },
  { name: 'b2b_relay_bytes_pct', unit: '%', step: ['b2b_webrtc'], read: (r) => r.b2b_webrtc && (100 * r.b2b_webrtc.relayed) / r.b2b_webrtc.bytes },
  { name: 'relay_cpu_s_per_gb_b2b_circuit', unit: 's/GB', step: ['b2b_circuit'], read: (r) => relayCpuPerGb(r.b2b_circuit) },
  // From dialling to the fetch's first byte (see `fetchOnce` and `b2bFetch` for where each
  // starts and ends).
  { name: 'dial_to_first_byte_ms_ws', unit: 'ms', step: ['fetch_ws'], read: (r) => r.fetch_ws?.firstByteMs },
  { name: 'dial_to_first_byte_ms_webrtc_direct', unit: 'ms', step: ['fetch_webrtc-direct'], read: (r) => r['fetch_webrtc-direct']?.firstByteMs },
  { name: 'dial_to_first_byte_ms_b2b_circuit', unit: 'ms', step: ['b2b_circuit'], read: (r) => r.b2b_circuit?.firstByteMs },
  { name: 'dial_to_first_byte_ms_b2b_webrtc', unit: 'ms', step: ['b2b_webrtc'], read: (r) => r.b2b_webrtc?.firstByteMs },
  // From dialling to the fetch's last block: what the user of a share link waits for. A page that
  // starts its fetch sooner, while its other seeds still connect, reads slower in fetch_ws and
  // may still be done sooner here.
  { name: 'dial_to_done_ms_ws', unit: 'ms', step: ['fetch_ws'], read: (r) => r.fetch_ws?.doneMs },
  { name: 'dial_to_done_ms_ws_1seed', unit: 'ms', step: ['fetch_ws_1seed'], read: (r) => r.fetch_ws_1seed?.doneMs },
  { name: 'relay_cpu_s_per_gb_b2b_webrtc', unit: 's/GB', step: ['b2b_webrtc'], read: (r) => relayCpuPerGb(r.b2b_webrtc) },
];

const B2B_BYTES = 16 << 20;
/// The largest message libp2p's WebRTC framing sends (spec webrtc.md: 16 KiB).
const B2B_MESSAGE = 16 << 10;

/// What the issue asks of each case on loopback: [case, test, in words].
const TARGETS = [
  ['fetch_ratio_ws', (v) => v >= 0.8, '>= 0.8'],
  ['fetch_ratio_webrtc_direct', (v) => v >= 0.8, '>= 0.8'],
  ['fetch_ratio_ws_3seeds_to_1', (v) => v >= 1, '>= 1 (fetch_ws >= fetch_ws_1seed)'],
  ['fetch_peers_ws', (v) => v >= 2, '>= 2'],
  ['longest_task_ms_ws', (v) => v <= 50, '<= 50'],
  ['page_wasm_bytes_on_wire', (v) => v <= 700_000, '<= 700 KB'],
  ['load_to_connected_ms_ws', (v) => v <= 500, '<= 500'],
  ['fetch_ratio_ws_to_memory', (v) => v >= 0.85, '>= 0.85 (IndexedDB costs at most 15 %)'],
  ['idb_put_4k_batched', (v) => v >= 10_000, '>= 10,000'],
  ['resume_refetched_blocks', (v) => v === 0, '= 0'],
  ['fetch_ratio_webrtc_direct_to_ws', (v) => v >= 0.9, '>= 0.9'],
  ['b2b_webrtc_ratio_to_datachannel', (v) => v >= 0.7, '>= 0.7'],
  ['b2b_relay_bytes_pct', (v) => v < 1, '< 1'],
];

const USAGE = `usage: cargo xtask bench browser [--runs N] [--cases a,b,...] [--seed-peers N]
       [--seed-content SIZE] [--format table|csv|json] [--profile [--transport ws|webrtc-direct]]
--profile: the page's load, one fetch and its ceiling's link probe under Chrome's CPU profiler (a
           page built with its function names), printed as time per kind of work and per
           function, and the fetch's time per MB against the probe's, instead of the cases
--transport: the page's transport to the relay under --profile (default ws)
cases: ${CASES.map((c) => c.name).join(', ')}`;

function options() {
  try {
    const { values } = parseArgs({
      options: {
        runs: { type: 'string', default: '5' },
        cases: { type: 'string', default: CASES.map((c) => c.name).join(',') },
        'seed-peers': { type: 'string', default: '3' },
        'seed-content': { type: 'string', default: '64MiB' },
        format: { type: 'string', default: 'table' },
        profile: { type: 'boolean', default: false },
        transport: { type: 'string', default: 'ws' },
        help: { type: 'boolean', default: false },
      },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    const runs = Number(values.runs);
    if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
    if (!['table', 'csv', 'json'].includes(values.format)) throw new Error(`--format must be table, csv or json, got ${values.format}`);
    if (!['ws', 'webrtc-direct'].includes(values.transport)) throw new Error(`--transport must be ws or webrtc-direct, got ${values.transport}`);
    const names = values.cases.split(',').filter(Boolean);
    const unknown = names.filter((n) => !CASES.some((c) => c.name === n));
    if (unknown.length) throw new Error(`unknown case ${unknown.join(', ')}`);
    return { ...values, runs, cases: CASES.filter((c) => names.includes(c.name)) };
  } catch (e) {
    console.error(`error: ${e.message}\n${USAGE}`);
    process.exit(2);
  }
}

const PAGE_TIMEOUT = 180_000;
const CONNECT_TIMEOUT = 30_000;
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

const mbps = (m) => m && m.bytes / 1e6 / (m.elapsedMs / 1000);
/// A step's time, and for a fetch from several peers the blocks each sent (what fetch_peers_ws
/// counts), so that a run's spread shows without a rerun.
const stepSummary = (m) => {
  if (!m) return 'failed';
  const split = m.peerBlocks?.length > 1 ? ` (blocks per peer ${m.peerBlocks.join('/')})` : '';
  return `${(m.elapsedMs / 1000).toFixed(2)} s${split}`;
};
const perSecond = (m) => m && m.count / (m.elapsedMs / 1000);
const relayCpuPerGb = (m) => m?.relayCpuS === undefined ? undefined : m.relayCpuS / (m.bytes / 1e9);
const ratio = (a, b) => (a === undefined || b === undefined ? undefined : a / b);

// Every main-thread task over 50 ms, from the page's first script on.
const LONGTASKS = `
  window.__longtasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longtasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
`;

// Every WebSocket message the page sends, as [start, ms spent in send()], from the page's first
// script on.
const SENDS = `
  window.__sends = [];
  {
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
      const start = performance.now();
      try {
        return send.call(this, data);
      } finally {
        window.__sends.push([start, performance.now() - start]);
      }
    };
  }
`;

// When the page marks its relay connection (`syncscope:relay-connected`), from the page's first
// script on.
const CONNECTED = `
  window.__connected = new Promise((resolve) => new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === 'syncscope:relay-connected') resolve(e.startTime);
  }).observe({ type: 'mark', buffered: true }));
`;

/// Opens `query` on `relay` `visits` times in a row and returns `read(page)` of the last visit,
/// or throws. The page runs in the browser's on-disk profile, as a user's does, with IndexedDB
/// cleared before each visit and the HTTP cache before the first. A second visit is a returning
/// visitor's: the HTTP cache and V8's code caches hold the page's code, compiled and warmed by
/// the first visit. Until the relay is connected the bench only listens, so that nothing it
/// runs competes with the load.
async function onPage(browser, relay, query, read, visits = 1) {
  const origin = new URL(relay.url).origin;
  const page = await browser.newStoredPage(origin);
  try {
    await page.addInitScript(LONGTASKS + SENDS + CONNECTED);
    let result;
    for (let visit = 0; visit < visits; visit++) {
      if (visit > 0) {
        await page.goto('about:blank');
        await page.clearIndexedDb(origin);
      }
      await page.goto(`${relay.url}?${query}`);
      // A page that never connects is left to `read`, which says what it shows instead.
      await Promise.race([page.evaluate('window.__connected').catch(() => {}), delay(CONNECT_TIMEOUT)]);
      result = await read(page);
    }
    if (page.errors.length) throw new Error(page.errors.join('; '));
    return result;
  } finally {
    await page.close();
  }
}

const number = async (page, selector, name) => Number(await page.attr(selector, name));

/// Waits for `done` or `failed` (by test id) and throws with the failure's text.
async function outcome(page, done, failed) {
  await page.waitFor(`[data-testid="${done}"], [data-testid="${failed}"]`, PAGE_TIMEOUT);
  if (await page.isPresent(`[data-testid="${failed}"]`)) throw new Error(await page.text(`[data-testid="${failed}"]`));
  return `[data-testid="${done}"]`;
}

/// The link probe to the relay or to the first peer through it.
async function probe(browser, relay, transport, target, size) {
  return onPage(browser, relay, `room=default&transport=${transport}&probe=${target}&probe-size=${size}`, async (page) => {
    const sampler = loadSampler(page, relay, browser);
    const done = await outcome(page, 'probe-done', 'probe-error');
    const elapsedMs = await number(page, done, 'elapsed-ms');
    return { bytes: await number(page, done, 'bytes'), elapsedMs, ...(await sampler.stop(elapsedMs)) };
  });
}

const SAMPLE_MS = 100;

/// Samples, every `SAMPLE_MS` until stopped, the page's main-thread task time (CDP's
/// Performance metrics), the CPU time of `relay`, of `browser`'s processes and of the machine, so
/// that a transfer's window can be cut out after it.
/// Sampling ends by itself when the page closes (a fetch that failed never stops it).
function loadSampler(page, relay, browser) {
  const samples = [];
  let stopped = false;
  let failure;
  const sampling = (async () => {
    await page.send('Performance.enable');
    while (!stopped) {
      const { metrics } = await page.send('Performance.getMetrics');
      const task = metrics.find((m) => m.name === 'TaskDuration')?.value;
      samples.push({
        at: performance.now() / 1000,
        task,
        relay: relay.cpuSnapshot(),
        browser: browser.cpuSnapshot(),
        machine: machineCpuSnapshot(),
      });
      await delay(SAMPLE_MS);
    }
  })().catch((e) => {
    failure = e;
  });
  return {
    /// Over the last `ms` before `endMs` (now by default): the page's task time and the relay's
    /// and the browser's CPU time, each as a percent of the time elapsed between the first and
    /// last samples in that window, and the machine's busy and stolen shares of all its cores.
    async stop(ms, endMs = performance.now()) {
      const end = endMs / 1000;
      stopped = true;
      await sampling;
      if (failure) throw failure;
      const within = samples.filter((s) => s.at >= end - ms / 1000 && s.at <= end);
      const [first, last] = [within[0], within.at(-1)];
      const pct = (spent) => (within.length < 2 ? undefined : (100 * spent(first, last)) / (last.at - first.at));
      const relayCpuPct = pct((a, b) => cpuSecondsBetween(a.relay, b.relay));
      // The relay's CPU seconds over the whole window, at the share of a core sampled within it.
      const relayCpuS = relayCpuPct === undefined ? undefined : (relayCpuPct / 100) * (ms / 1000);
      const machine = within.length < 2 ? {} : machineSharesBetween(first.machine, last.machine);
      return {
        pageBusyPct: pct((a, b) => b.task - a.task),
        relayCpuPct,
        relayCpuS,
        browserCpuPct: pct((a, b) => cpuSecondsBetween(a.browser, b.browser)),
        machineBusyPct: machine.busyPct,
        machineStealPct: machine.stealPct,
      };
    },
  };
}

/// A fetch of `cid` (on the page's `visits`-th load), with what the page reports about it and
/// about itself.
async function fetchOnce(browser, relay, cid, transport, visits = 1, extra = '') {
  return onPage(browser, relay, `room=default&fetch=${cid}&transport=${transport}${extra}`, async (page) => {
    const sampler = loadSampler(page, relay, browser);
    const done = await outcome(page, 'fetch-done', 'transfer-error');
    const elapsedMs = await number(page, done, 'elapsed-ms');
    const load = await sampler.stop(elapsedMs);
    const page_ = await page.evaluate(`(() => {
      const now = performance.now();
      // The fetch's own window; the page's load and wasm start-up come before it.
      const since = now - ${elapsedMs} - 100;
      const during = window.__longtasks.filter((t) => t.start + t.duration >= since);
      const sends = window.__sends.filter(([start]) => start >= since);
      const wasm = performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm'));
      // From the node's start, when it dials the relay, to the share link's fetch's first byte.
      const at = (name) => performance.getEntriesByName('syncscope:' + name).at(-1)?.startTime;
      return {
        longestTaskMs: Math.max(0, ...during.map((t) => t.duration)),
        sends: { count: sends.length, ms: sends.reduce((sum, [, ms]) => sum + ms, 0) },
        wasmOnWire: wasm?.encodedBodySize,
        firstByteMs: at('fetch-first-byte') - at('node-started'),
        doneMs: at('fetch-started') + ${elapsedMs} - at('node-started'),
      };
    })()`);
    return {
      elapsedMs,
      bytes: await number(page, done, 'bytes'),
      blocks: await number(page, done, 'blocks'),
      duplicates: await number(page, done, 'duplicates'),
      peerBlocks: (await page.attr(done, 'peer-blocks')).split(',').filter(Boolean).map(Number),
      connectedMs: await number(page, '[data-testid="status"]', 'connected-after-ms'),
      ...page_,
      ...load,
    };
  }, visits);
}

/// `count` blocks of `size` bytes put into a fresh IndexedDB database through the node's store,
/// all at once (`batched`: the store groups them) or one transaction each (the page's
/// `measure_block_store`).
async function storePuts(browser, relay, size, count, batched) {
  return onPage(browser, relay, 'room=bench-store&store=memory', async (page) => {
    await page.waitFor('[data-testid="own-peer-id"]', PAGE_TIMEOUT);
    const elapsedMs = await page.evaluate(`window.wasmBindings.measure_block_store(${size}, ${count}, ${batched})`);
    return { elapsedMs, count, bytes: size * count };
  });
}

/// A page that joins with an empty store and nothing to fetch pulls every Swarm chunk of the
/// seeds' content over ws: the time from its connection until the seeds sent their last chunk,
/// and how many they sent. The last is the one followed by [`PULL_QUIET_MS`] without another: a
/// page busy hashing held the seeds back for over 1.5 s in mid-sync.
const PULL_QUIET_MS = 4000;

async function pullSync(browser, relay) {
  // A page of an earlier case may have closed while it pulled: its chunks would count here.
  await seedsQuiet(relay, 1000, 30_000);
  return onPage(browser, relay, 'room=default&transport=ws', async (page) => {
    const sampler = loadSampler(page, relay, browser);
    const start = performance.now();
    const { first: before, sent, lastAt } = await seedsQuiet(relay, PULL_QUIET_MS, PAGE_TIMEOUT);
    if (sent === before) throw new Error('the seeds sent no chunk');
    const load = await sampler.stop(lastAt - start, lastAt);
    // Every chunk is 4 KiB of payload but the file's last (and the tree's partly full ones).
    return { elapsedMs: lastAt - start, chunks: sent - before, bytes: (sent - before) * 4096, ...load };
  });
}

/// Polls the chunks `relay`'s seeds have sent until the count has not moved for `quietMs` (at
/// most `limitMs`): the count at the start and at the end, and when it last moved.
async function seedsQuiet(relay, quietMs, limitMs) {
  const start = performance.now();
  const first = await seedChunksSent(relay);
  let [sent, lastAt] = [first, start];
  while (performance.now() - lastAt < quietMs && performance.now() - start < limitMs) {
    await delay(50);
    const now = await seedChunksSent(relay);
    if (now !== sent) [sent, lastAt] = [now, performance.now()];
  }
  return { first, sent, lastAt };
}

/// A fetch of `relay`'s demo content over ws, reloaded once `atBytes` have arrived; the resumed
/// fetch must take every block the store held at the reload from the store. `refetched`: the
/// blocks stored before the reload that the resumed fetch took from the network instead.
async function resume(browser, relay, atBytes) {
  const cid = new URL(relay.shareLink).searchParams.get('fetch');
  return onPage(browser, relay, `room=default&fetch=${cid}&transport=ws`, async (page) => {
    await page.evaluate(`new Promise((resolve) => {
      const check = () => Number(document.querySelector('[data-testid="fetch-progress"]')?.dataset.bytes ?? 0) >= ${atBytes}
        && (observer.disconnect(), resolve(true));
      const observer = new MutationObserver(check);
      observer.observe(document, { subtree: true, childList: true, attributes: true });
      check();
    })`);
    await page.send('Page.reload');
    const done = await outcome(page, 'fetch-done', 'transfer-error');
    const stored = await number(page, '[data-testid="storage"]', 'blocks-at-start');
    const fromStore = await number(page, done, 'from-store');
    if (!(stored > 0)) throw new Error('nothing was stored before the reload');
    return { elapsedMs: await number(page, done, 'elapsed-ms'), stored, refetched: stored - fromStore };
  });
}

/// The measurement steps one run takes, in order, for the chosen cases.
function steps(cases) {
  const wanted = new Set(cases.flatMap((c) => c.step));
  return ['probe_relay_ws', 'probe_peer_ws', 'fetch_ws', 'fetch_ws_memory', 'fetch_ws_revisit', 'probe_peer_webrtc-direct',
    'fetch_webrtc-direct', 'pullsync_ws', 'fetch_ws_1seed', 'fetch_webrtc-direct_1seed', 'idb_put_4k_batched', 'idb_put_4k_per_tx', 'idb_put_256k_batched', 'resume',
    'b2b_datachannel', 'b2b_circuit', 'b2b_webrtc']
    .filter((s) => wanted.has(s));
}

function runStep(step, ctx) {
  const { browser, relay, oneSeed, resumeSeed, b2bRelay, cid, size } = ctx;
  switch (step) {
    case 'probe_relay_ws': return probe(browser, relay, 'ws', 'relay', size);
    case 'probe_peer_ws': return probe(browser, relay, 'ws', 'peer', size);
    case 'probe_peer_webrtc-direct': return probe(browser, relay, 'webrtc-direct', 'peer', size);
    case 'fetch_ws': return fetchOnce(browser, relay, cid, 'ws');
    case 'fetch_ws_revisit': return fetchOnce(browser, relay, cid, 'ws', 2);
    case 'fetch_webrtc-direct': return fetchOnce(browser, relay, cid, 'webrtc-direct');
    case 'fetch_ws_1seed': return fetchOnce(browser, oneSeed, cid, 'ws');
    case 'fetch_webrtc-direct_1seed': return fetchOnce(browser, oneSeed, cid, 'webrtc-direct');
    case 'fetch_ws_memory': return fetchOnce(browser, relay, cid, 'ws', 1, '&store=memory');
    case 'pullsync_ws': return pullSync(browser, relay);
    case 'idb_put_4k_batched': return storePuts(browser, relay, 4096, 20_000, true);
    case 'idb_put_4k_per_tx': return storePuts(browser, relay, 4096, 20_000, false);
    case 'idb_put_256k_batched': return storePuts(browser, relay, 256 << 10, 256, true);
    case 'resume': return resume(browser, resumeSeed, 16 << 20);
    case 'b2b_datachannel': return dataChannelCeiling(browser, b2bRelay, B2B_BYTES, B2B_MESSAGE);
    case 'b2b_circuit': return b2bFetch(browser, b2bRelay, B2B_BYTES, false);
    case 'b2b_webrtc': return b2bFetch(browser, b2bRelay, B2B_BYTES, true);
    default: throw new Error(`no step ${step}`);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function summarise(c, runs) {
  const values = runs.map(c.read).filter((v) => typeof v === 'number' && Number.isFinite(v));
  const stat = (f) => (values.length ? f(values) : null);
  return {
    case: c.name,
    unit: c.unit,
    n: values.length,
    failed: runs.length - values.length,
    median: stat(median),
    min: stat((x) => Math.min(...x)),
    max: stat((x) => Math.max(...x)),
  };
}

const COLUMNS = ['case', 'unit', 'n', 'failed', 'median', 'min', 'max'];

function cell(column, v) {
  if (v === null || v === undefined) return '-';
  if (typeof v !== 'number' || ['n', 'failed'].includes(column)) return String(v);
  return Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(2);
}

function print(rows, opts, context) {
  if (opts.format === 'json') {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  const table = [COLUMNS, ...rows.map((r) => COLUMNS.map((c) => cell(c, r[c])))];
  if (opts.format === 'csv') {
    for (const row of table) console.log(row.join(','));
    return;
  }
  const widths = COLUMNS.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) console.log(row.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  console.log(`\n${context}`);
  const byCase = Object.fromEntries(rows.map((r) => [r.case, r]));
  const checked = TARGETS.filter(([name]) => byCase[name]?.median !== null && byCase[name]);
  if (checked.length) {
    console.log('\nTargets (medians):');
    for (const [name, ok, words] of checked) {
      console.log(`  ${ok(byCase[name].median) ? 'met    ' : 'MISSED '} ${name} ${words} (${cell('median', byCase[name].median)})`);
    }
  }
}

const opts = options();
const bin = process.env.SYNCSCOPE_RELAY_BIN;
const dist = process.env.SYNCSCOPE_DIST;
if (!bin || !dist) {
  console.error('error: set SYNCSCOPE_RELAY_BIN and SYNCSCOPE_DIST (cargo xtask bench browser does this)');
  process.exit(2);
}
const seeds = (n) => ['--seed-peers', String(n), '--seed-content', opts['seed-content']];
if (opts.profile) {
  const relay = await startRelay({ bin, dist, args: seeds(opts['seed-peers']) });
  const browser = await launchCdpBrowser();
  try {
    const origin = new URL(relay.url).origin;
    const cid = new URL(relay.shareLink).searchParams.get('fetch');
    const transport = opts.transport;
    const profile = await profileFetchAndCeiling(() => browser.newStoredPage(origin), relay, cid, opts['seed-content'], transport);
    console.log(`Chrome's sampling CPU profiler (250 µs) over the page's load (from the navigation's commit until the relay
connects), one ${opts['seed-content']} fetch over ${transport} from ${opts['seed-peers']} seed peers, then on a fresh page the
link probe of the same size to the first seed through the relay (ceiling_${transport.replace('-', '_')}),
in headless Chromium ${browser.version()} on loopback; the page is the release build with its wasm function names kept and
no wasm-opt, so it runs a little slower than the served one. Self time: the function on top of the stack.\n`);
    printProfile(profile);
  } finally {
    await browser.close();
    await relay.stop();
  }
  process.exit(0);
}
const plan = steps(opts.cases);
const relay = await startRelay({ bin, dist, args: seeds(opts['seed-peers']) });
const oneSeed = plan.some((s) => s.endsWith('_1seed')) ? await startRelay({ bin, dist, args: seeds(1) }) : null;
const resumeSeed = plan.includes('resume') ? await startRelay({ bin, dist, args: ['--seed-peers', '1', '--seed-content', '32MiB'] }) : null;
// Without seed peers, whose own circuits (they dial each other through the relay) would count
// in the relay's bytes and CPU time.
const b2bRelay = plan.some((s) => s.startsWith('b2b_')) ? await startRelay({ bin, dist, args: ['--seed-peers', '0'] }) : null;
const browser = await launchCdpBrowser();
const results = [];
const errors = [];
try {
  if (!relay.shareLink) throw new Error('the relay printed no share link: it needs --seed-peers 1 or more');
  const cid = new URL(relay.shareLink).searchParams.get('fetch');
  const ctx = { browser, relay, oneSeed, resumeSeed, b2bRelay, cid, size: opts['seed-content'] };
  // Not measured: the browser's own start-up (its first page, network and IndexedDB use) would
  // otherwise fall on whichever case runs first, up to seconds of it.
  await probe(browser, relay, 'ws', 'peer', '1MiB');
  for (let i = 0; i < opts.runs; i += 1) {
    const run = {};
    // Every other run takes the steps in reverse, so that a pair of cases compared in a ratio
    // (fetch_ws against fetch_ws_1seed, say) has each case first as often: whatever one page
    // leaves behind for the next (the browser's caches, a tab still listed in its room for a
    // few seconds) then weighs on both alike.
    for (const step of i % 2 ? [...plan].reverse() : plan) {
      try {
        run[step] = await runStep(step, ctx);
      } catch (e) {
        errors.push(`run ${i + 1} ${step}: ${String(e.message ?? e).split('\n')[0]}`);
      }
    }
    results.push(run);
    console.error(`run ${i + 1}/${opts.runs}: ${plan.map((s) => `${s} ${stepSummary(run[s])}`).join(', ')}`);
  }
} finally {
  await browser.close();
  await relay.stop();
  await oneSeed?.stop();
  await resumeSeed?.stop();
  await b2bRelay?.stop();
}
const rows = opts.cases.map((c) => summarise(c, results));
print(rows, opts, `Measured in headless Chromium ${browser.version()} (driven over the DevTools Protocol with only Page and Runtime
enabled, and Performance's counters on fetch pages: no network capture) on loopback against a release relay and the release page
(${opts['seed-content']} demo file, ${opts['seed-peers']} seed peers inside the relay; fetch_*_1seed from a second relay with 1).
Each case opens a page in the browser's on-disk profile with the origin's IndexedDB and the HTTP cache cleared;
the second, fourth, ... runs take the cases in reverse order. ceiling_*: the link probe (a bare stream of the same size, nothing but
libp2p's layers) to the first seed through the relay circuit, or to the relay itself; fetch_*: the page's own figure from
the start of the fetch until every block is verified; fetch_ws_revisit: the same on the page's second load in its context,
as a returning visitor's (its code comes compiled and warmed from the first visit's caches);
ratios pair a fetch with the ceiling of the same run. fetch_ws_page_send*: the page's WebSocket.send() calls during
fetch_ws (window updates, wants) and the main-thread time spent inside them. page_busy_pct_*: the page's main-thread task time
(CDP's Performance.getMetrics, sampled every 100 ms) as a share of the fetch's (or the ceiling's probe's) time; relay_cpu_pct_*: the relay process's CPU time
(each thread's /proc/PID/task/TID/schedstat, its seed peers included) over the same window, as a share of one core; relay_cpu_s_per_gb_fetch_*: that CPU time
per GB fetched. browser_cpu_pct_*: the CPU time of every Chromium process (/proc/PID/stat; the page's thread, its renderer's
other threads, the network service, the GPU and browser processes), as a share of one core, over the window of a fetch or a
ceiling's probe. machine_busy_pct_*: every core's busy time (/proc/stat, hypervisor steal included) over the same window of a
fetch or a ceiling's probe, as a share of all ${availableParallelism()} cores: near 100, every process shares them; machine_steal_pct_*: the part
the hypervisor took. fetch_ws keeps its blocks in IndexedDB, the page's default;
fetch_ws_memory is the same with ?store=memory. pullsync_ws: a page that joins with an empty store and nothing to fetch pulls
every Swarm chunk of the demo content from the seeds over ws, from its connection until the seeds sent their last chunk (their
/metrics; none for 4 s after it), counted as 4 KiB per chunk; pullsync_chunks_ws: the chunks they sent. idb_put_*: incompressible blocks put through the node's IndexedDB store into a fresh
database (20,000 x 4 KiB, 256 x 256 KiB), all issued at once and grouped by the store, or one transaction each.
resume_refetched_blocks: a 32 MiB fetch from one seed (a third relay) reloaded after 16 MiB; the blocks the store held at
the reload that the resumed fetch did not take from it. b2b_*: two fresh pages in one browser, on a fourth relay without seeds; one shares 16 MiB, the other
fetches it through the relay's circuit (?direct=off) or over direct WebRTC once connected so; the relay's circuit bytes and CPU
time (per thread, as above) are read just before and after the fetch. ceiling_b2b_datachannel: a plain RTCDataChannel between two such pages,
16 MiB in 16 KiB messages (the spec framing's largest), paused at 64 KiB buffered as the node's channels are. MB/s = 10^6 B/s.
Median, min and max over the runs where the case completed (n); failed counts the rest.`);
for (const e of errors) console.log(`failed: ${e}`);
process.exit(rows.every((r) => r.failed === 0) ? 0 : 1);
