// Where the page's time goes: its load until the relay connects, then one fetch, each under
// Chrome's sampling CPU profiler (the DevTools Protocol's Profiler domain), each sample's self time
// put to the kind of work its function does. Run against a page built with its wasm function
// names (`--profile`).

/// Kinds of work, by function name; the first match wins, so specific kinds come first.
const KINDS = [
  ['hashing (SHA-2/3)', /sha2|sha256|compress256|sha3|keccak/i],
  ['Noise cipher (ChaCha20-Poly1305)', /chacha|poly1305|snow|noise|aead|cipher/i],
  ['yamux', /yamux/i],
  ['WebRTC data channels', /webrtc/i],
  ['WebSocket and JS/wasm boundary', /websocket|web_sys|js_sys|wasm_bindgen|__wbg|closure|onmessage|getRandomValues/i],
  ['copies (memcpy, Bytes, Vec)', /memcpy|memmove|memset|copy_from_slice|extend_from_slice|to_vec|bytes::|BytesMut/i],
  ['allocation', /dlmalloc|alloc::|__rust_alloc|__rust_dealloc|realloc|malloc|\bfree\b/i],
  ['Bitswap', /bitswap/i],
  ['pull-sync', /pullsync/i],
  ['protobuf', /prost|protobuf/i],
  ['CIDs and multihashes', /cid::|multihash|unsigned_varint/i],
  ['gossipsub, identify, ping', /gossipsub|identify|libp2p_ping/i],
  ['libp2p swarm, multistream, relay', /libp2p_swarm|multistream|libp2p_relay|libp2p_core/i],
  ['Leptos UI and charts', /leptos|reactive_graph|tachys|plotters|syncscope_ui/i],
  ['timers', /setTimeout|clearTimeout|gloo_timers|futures_timer/i],
  ['polling (futures, the node driver)', /futures|poll|waker|wasm_bindgen_futures|syncscope_node/i],
  ['garbage collection', /^\(garbage collector\)$/],
  ['idle', /^\(idle\)$/],
  ['browser outside JS and wasm (network, layout, paint)', /^\(program\)$/],
];

function kindOf(frame) {
  const name = frame.functionName || '(anonymous)';
  for (const [kind, re] of KINDS) if (re.test(name)) return kind;
  return frame.url.endsWith('.wasm') || name.startsWith('wasm-function') ? 'other wasm' : 'other JS';
}

/// Rust symbols shortened to their last path segments, without the hash.
function shortName(name) {
  return (name || '(anonymous)').replace(/::h[0-9a-f]{16}$/, '').replace(/<.*>/g, '<…>').slice(-90);
}

/// JS functions are marked as such; an anonymous one is told apart by where it is defined.
function jsSuffix(frame) {
  if (frame.functionName || !frame.url) return ' (JS)';
  return ` (JS ${frame.url.split('/').pop()}:${frame.lineNumber + 1})`;
}

/// A CPU profile's samples in order, as [call frame, µs].
function samplesOf(profile) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  return profile.samples.map((id, i) => [byNode.get(id).callFrame, profile.timeDeltas[i] ?? 0]);
}

/// Self time per kind and per function over `samples`.
function breakdown(samples) {
  const kinds = new Map();
  const functions = new Map();
  let total = 0;
  for (const [frame, us] of samples) {
    total += us;
    const kind = kindOf(frame);
    kinds.set(kind, (kinds.get(kind) ?? 0) + us);
    const fn = `${shortName(frame.functionName)}${frame.url.endsWith('.wasm') ? '' : jsSuffix(frame)}`;
    const f = functions.get(fn) ?? { us: 0, kind };
    f.us += us;
    functions.set(fn, f);
  }
  return {
    totalMs: total / 1000,
    kinds: [...kinds].map(([kind, us]) => ({ kind, ms: us / 1000 })).sort((a, b) => b.ms - a.ms),
    functions: [...functions].map(([name, f]) => ({ name, kind: f.kind, ms: f.us / 1000 }))
      .sort((a, b) => b.ms - a.ms),
  };
}

const LONG_TASK_MS = 50;

/// Stretches of at least `minMs` in which every sample was busy (not `(idle)`): the profile's view
/// of long main-thread tasks, with each stretch's own breakdown. Back-to-back tasks with no idle
/// sample between them count as one stretch.
function busyStretches(samples, minMs) {
  const stretches = [];
  let start = null;
  let t = 0;
  const close = (end) => {
    if (start !== null && (t - start.t) / 1000 >= minMs) {
      stretches.push({ atMs: start.t / 1000, ...breakdown(samples.slice(start.i, end)) });
    }
    start = null;
  };
  samples.forEach(([frame, us], i) => {
    t += us;
    if (frame.functionName === '(idle)') close(i);
    else if (start === null) start = { i, t };
  });
  close(samples.length);
  return stretches.sort((a, b) => b.totalMs - a.totalMs);
}

/// Profiles `page` from navigation to its relay connection, then its work until `done` shows:
/// each phase's time and its breakdown. `query` starts the work (a fetch or a link probe).
async function profileRun(page, relay, query, done) {
  // The profiler starts once the navigation commits: a new document may get a new renderer.
  await page.goto(`${relay.url}?room=default&${query}`);
  await page.send('Profiler.enable');
  await page.send('Profiler.setSamplingInterval', { interval: 250 });
  await page.send('Profiler.start');
  const status = '[data-testid="status"][data-connected-after-ms]';
  await page.waitFor(status, 60_000);
  const load = breakdown(samplesOf((await page.send('Profiler.stop')).profile));
  load.elapsedMs = Number(await page.attr(status, 'connected-after-ms'));
  // From the connection on, so that the work's start, where the page compiles and runs its
  // code for the first time, is in the profile too.
  await page.send('Profiler.start');
  const selector = `[data-testid="${done}"]`;
  await page.waitFor(selector, 300_000);
  const samples = samplesOf((await page.send('Profiler.stop')).profile);
  const run = breakdown(samples);
  run.busy = busyStretches(samples, LONG_TASK_MS);
  run.elapsedMs = Number(await page.attr(selector, 'elapsed-ms'));
  run.bytes = Number(await page.attr(selector, 'bytes'));
  return { load, run };
}

/// The fetch of `cid` over `transport` (ws or webrtc-direct), and the link probe to the first seed
/// through the relay (the `ceiling_<transport>` case's bare stream of `size`), each on a fresh
/// page from `newPage`.
export async function profileFetchAndCeiling(newPage, relay, cid, size, transport) {
  const profiled = async (query, done) => {
    const page = await newPage();
    try {
      return await profileRun(page, relay, query, done);
    } finally {
      await page.close();
    }
  };
  const fetch = await profiled(`transport=${transport}&fetch=${cid}`, 'fetch-done');
  const ceiling = await profiled(`transport=${transport}&probe=peer&probe-size=${size}`, 'probe-done');
  return { load: fetch.load, fetch: fetch.run, ceiling: ceiling.run };
}

export function printProfile({ load, fetch, ceiling }) {
  console.log(`== page load: navigation to connected in ${load.elapsedMs} ms; ${load.totalMs.toFixed(0)} ms profiled\n`);
  printBreakdown(load, 15);
  console.log(`\n== fetch: ${(fetch.bytes / 1e6).toFixed(1)} MB in ${(fetch.elapsedMs / 1000).toFixed(2)} s; ${fetch.totalMs.toFixed(0)} ms profiled\n`);
  printBreakdown(fetch, 25);
  console.log(`\n== the fetch against its ceiling: the bare stream of ${(ceiling.bytes / 1e6).toFixed(1)} MB in ${(ceiling.elapsedMs / 1000).toFixed(2)} s, ms per MB moved`);
  printComparison(ceiling, fetch);
  console.log(`\n== busy stretches of ${LONG_TASK_MS} ms or more during the fetch (no idle sample): ${fetch.busy.length}`);
  for (const b of fetch.busy.slice(0, 5)) {
    console.log(`\n${b.totalMs.toFixed(0)} ms at ${b.atMs.toFixed(0)} ms after the connection`);
    printBreakdown(b, 8);
  }
}

/// Self time per MB moved, kind by kind, for the ceiling and the fetch: what the fetch spends
/// that the bare stream of the same path does not.
function printComparison(ceiling, fetch) {
  const perMb = (p) => new Map(p.kinds.map((k) => [k.kind, k.ms / (p.bytes / 1e6)]));
  const [c, f] = [perMb(ceiling), perMb(fetch)];
  const rows = [...new Set([...c.keys(), ...f.keys()])]
    .map((kind) => ({ kind, c: c.get(kind) ?? 0, f: f.get(kind) ?? 0 }))
    .sort((a, b) => (b.f - b.c) - (a.f - a.c));
  const fmt = (x) => x.toFixed(2).padStart(8);
  console.log(`  ${'kind of work'.padEnd(54)} ${'ceiling'.padStart(8)} ${'fetch'.padStart(8)} ${'extra'.padStart(8)}`);
  for (const r of rows) console.log(`  ${r.kind.padEnd(54)} ${fmt(r.c)} ${fmt(r.f)} ${fmt(r.f - r.c)}`);
  const total = (p) => p.totalMs / (p.bytes / 1e6);
  console.log(`  ${'all samples'.padEnd(54)} ${fmt(total(ceiling))} ${fmt(total(fetch))} ${fmt(total(fetch) - total(ceiling))}`);
}

function printBreakdown(p, top) {
  const pct = (ms) => `${((100 * ms) / p.totalMs).toFixed(1).padStart(5)} %`;
  console.log('self time by kind of work');
  for (const k of p.kinds) console.log(`  ${k.kind.padEnd(54)} ${k.ms.toFixed(0).padStart(7)} ms  ${pct(k.ms)}`);
  console.log(`\ntop ${top} functions by self time`);
  for (const f of p.functions.slice(0, top)) {
    console.log(`  ${pct(f.ms)}  ${f.ms.toFixed(0).padStart(6)} ms  ${f.name}  [${f.kind}]`);
  }
}
