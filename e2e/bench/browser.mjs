// `cargo xtask bench browser`: the demo fetch, measured in real headless Chromium. A release relay
// with seed peers serves its demo file; each run opens the share link in a fresh browser context
// over one transport and reads the outcome the page reports. Prints median, min and max over the
// runs, per transport side by side.
import { parseArgs } from 'node:util';

import { launchBrowser, openPage } from '../lib/browser.mjs';
import { startRelay } from '../lib/relay.mjs';

const USAGE = `usage: cargo xtask bench browser [--runs N] [--transports ws,webrtc-direct]
       [--seed-peers N] [--seed-content SIZE] [--format table|csv|json]`;

function options() {
  try {
    const { values } = parseArgs({
      options: {
        runs: { type: 'string', default: '5' },
        transports: { type: 'string', default: 'ws,webrtc-direct' },
        'seed-peers': { type: 'string', default: '3' },
        'seed-content': { type: 'string', default: '8MiB' },
        format: { type: 'string', default: 'table' },
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
    return { ...values, runs, transports: values.transports.split(',').filter(Boolean) };
  } catch (e) {
    console.error(`error: ${e.message}\n${USAGE}`);
    process.exit(2);
  }
}

const FETCH_TIMEOUT = 120_000;

/// One fetch of `cid` over `transport` in a fresh context: the page's figures, or the error.
async function fetchOnce(browser, relay, cid, transport) {
  const { page, errors, close } = await openPage(browser);
  try {
    await page.goto(`${relay.url}?room=default&fetch=${cid}&transport=${transport}`);
    const done = page.getByTestId('fetch-done');
    await done.waitFor({ timeout: FETCH_TIMEOUT });
    const attr = async (name) => Number(await done.getAttribute(`data-${name}`));
    const run = {
      elapsedMs: await attr('elapsed-ms'),
      bytes: await attr('bytes'),
      blocks: await attr('blocks'),
      peers: await attr('peers'),
      duplicates: await attr('duplicates'),
    };
    if (errors.length) throw new Error(errors.join('; '));
    return run;
  } catch (e) {
    return { error: String(e.message ?? e).split('\n')[0] };
  } finally {
    await close();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function summarise(transport, runs) {
  const ok = runs.filter((r) => !r.error);
  const secs = ok.map((r) => r.elapsedMs / 1000);
  const mibps = ok.map((r) => r.bytes / (1 << 20) / (r.elapsedMs / 1000));
  const dupPct = ok.map((r) => (100 * r.duplicates) / (r.blocks + r.duplicates));
  const stat = (xs, f) => (xs.length ? f(xs) : null);
  return {
    transport,
    runs: runs.length,
    completed: ok.length,
    time_s_median: stat(secs, median),
    time_s_min: stat(secs, (x) => Math.min(...x)),
    time_s_max: stat(secs, (x) => Math.max(...x)),
    mib_per_s_median: stat(mibps, median),
    dup_pct_median: stat(dupPct, median),
    dup_pct_max: stat(dupPct, (x) => Math.max(...x)),
    peers_median: stat(ok.map((r) => r.peers), median),
    errors: runs.filter((r) => r.error).map((r) => r.error),
  };
}

const COLUMNS = ['transport', 'runs', 'completed', 'time_s_median', 'time_s_min', 'time_s_max',
  'mib_per_s_median', 'dup_pct_median', 'dup_pct_max', 'peers_median', 'x_first'];

const COUNTS = new Set(['runs', 'completed']);

function cell(column, v) {
  if (v === null || v === undefined) return '-';
  return typeof v === 'number' && !COUNTS.has(column) ? v.toFixed(2) : String(v);
}

function print(rows, opts, size) {
  const base = rows[0]?.time_s_median;
  for (const r of rows) r.x_first = base && r.time_s_median !== null ? r.time_s_median / base : null;
  if (opts.format === 'json') {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  if (opts.format === 'csv') {
    console.log(COLUMNS.join(','));
    for (const r of rows) console.log(COLUMNS.map((c) => cell(c, r[c])).join(','));
    return;
  }
  const table = [COLUMNS, ...rows.map((r) => COLUMNS.map((c) => cell(c, r[c])))];
  const widths = COLUMNS.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) console.log(row.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  '));
  console.log(`\nOne run: a fresh browser context opens the share link over one transport and fetches the ${size} demo file
over Bitswap from ${opts['seed-peers']} seed peers inside a release relay on loopback. time_s is what the page reports: from the
start of the fetch (once a room member is known) until every block is verified, including dialling the other seeds.
Median, min and max over the completed runs; x_first is time_s_median over the first transport's.`);
  for (const r of rows) for (const e of r.errors) console.log(`${r.transport}: run failed: ${e}`);
}

const opts = options();
const bin = process.env.SYNCSCOPE_RELAY_BIN;
const dist = process.env.SYNCSCOPE_DIST;
if (!bin || !dist) {
  console.error('error: set SYNCSCOPE_RELAY_BIN and SYNCSCOPE_DIST (cargo xtask bench browser does this)');
  process.exit(2);
}
const relay = await startRelay({
  bin, dist, args: ['--seed-peers', opts['seed-peers'], '--seed-content', opts['seed-content']],
});
const browser = await launchBrowser();
const rows = [];
try {
  if (!relay.shareLink) throw new Error('the relay printed no share link: it needs --seed-peers 1 or more');
  const cid = new URL(relay.shareLink).searchParams.get('fetch');
  for (const transport of opts.transports) {
    const runs = [];
    for (let i = 0; i < opts.runs; i += 1) {
      runs.push(await fetchOnce(browser, relay, cid, transport));
      const last = runs[runs.length - 1];
      console.error(`${transport} run ${i + 1}/${opts.runs}: ${last.error ? `failed: ${last.error}` : `${(last.elapsedMs / 1000).toFixed(2)} s`}`);
    }
    rows.push(summarise(transport, runs));
  }
} finally {
  await browser.close();
  await relay.stop();
}
print(rows, opts, opts['seed-content']);
process.exit(rows.every((r) => r.completed === r.runs) ? 0 : 1);
