#!/usr/bin/env node
// helia-peer.mjs: a real Helia 7 node (js-libp2p 3.x) for syncscope interop tests.
//
// Run with Node 20 as:
//   node --experimental-websocket --import ./polyfill.mjs helia-peer.mjs <command> [options]
//
// Commands (every result is one JSON object per line on stdout; logs go to stderr):
//   add        --file PATH
//   serve      --file PATH [--listen MA ...] [--relay MA] [--relay-timeout-ms N]
//   fetch      --connect MA --cid CID [--out PATH] [--timeout-ms N]
//   (serve/fetch also take --limited-workaround, --yamux-max-frame N, --no-ping: see USAGE)
//   car-export --file PATH --out CAR
//   car-import --car CAR
//   cat-car    --car CAR --cid CID --out PATH
//
// UnixFS import settings (fixed, explicit): CIDv1, raw leaves, fixed-size chunker of
// 262144 bytes, balanced layout with maxChildrenPerNode 174, reduceSingleLeafToSelf true
// (kubo's `ipfs add --cid-version=1` defaults). @helia/unixfs's own defaults differ
// (1 MiB chunks, 1024 children), so never call it without these options.
//
// Set DEBUG=helia:bitswap*,libp2p:* (etc.) for library logs on stderr.

import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { once, setMaxListeners } from 'node:events'
import { performance } from 'node:perf_hooks'

import { withBitswap } from '@helia/bitswap'
import { car } from '@helia/car'
import { withLibp2pLight } from '@helia/libp2p'
import { unixfs } from '@helia/unixfs'
import { CarBlockIterator } from '@ipld/car/iterator'
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { identify } from '@libp2p/identify'
import { noise } from '@libp2p/noise'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import { webSockets } from '@libp2p/websockets'
import { yamux } from '@libp2p/yamux'
import { YamuxStream } from '@libp2p/yamux/stream'
import { multiaddr } from '@multiformats/multiaddr'
import { MemoryBlockstore } from 'blockstore-core'
import { MemoryDatastore } from 'datastore-core'
import { createHeliaLight } from 'helia'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'

const CHUNK_SIZE = 262_144
const MAX_CHILDREN = 174
const DEFAULT_LISTEN = ['/ip4/127.0.0.1/tcp/0', '/ip4/127.0.0.1/tcp/0/ws']

// ---------------------------------------------------------------- output

function emit (obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

function log (...args) {
  process.stderr.write(`[helia-peer ${new Date().toISOString()}] ${args.join(' ')}\n`)
}

class UsageError extends Error {}

// ---------------------------------------------------------------- settings

function importOptions () {
  return {
    cidVersion: 1,
    rawLeaves: true,
    chunker: fixedSize({ chunkSize: CHUNK_SIZE }),
    layout: balanced({ maxChildrenPerNode: MAX_CHILDREN }),
    reduceSingleLeafToSelf: true,
    wrapWithDirectory: false
  }
}

/** An offline Helia: no libp2p, no block brokers, memory stores. */
async function createOfflineHelia () {
  const helia = createHeliaLight({
    blockstore: new MemoryBlockstore(),
    datastore: new MemoryDatastore()
  })
  await helia.start()
  return helia
}

/**
 * createHeliaLight + libp2p (tcp, websockets, circuit-relay transport, noise, yamux,
 * identify) + bitswap with runOnLimitedConnections. No bootstrap, no DHT, no autonat,
 * no upnp, no mdns, no HTTP gateways/delegated routing.
 */
async function createNetworkedHelia ({ listen = [], withPing = true } = {}) {
  const services = { identify: identify() }
  if (withPing) {
    // Needed beside rust-libp2p: js-libp2p's connection monitor pings every 10 s and
    // aborts the connection when a ping times out, and rust-libp2p-ping 0.48 stops
    // answering inbound pings on a connection once it has seen that the remote does
    // not support /ipfs/ping/1.0.0. Without this service a rust peer/relay
    // connection dies about 15 s after it opens. (Helia's full createHelia has ping.)
    services.ping = ping()
  }
  const helia = withBitswap(
    withLibp2pLight(
      createHeliaLight({
        blockstore: new MemoryBlockstore(),
        datastore: new MemoryDatastore()
      }),
      {
        addresses: { listen },
        transports: [tcp(), webSockets(), circuitRelayTransport()],
        connectionEncrypters: [noise()],
        streamMuxers: [yamux()],
        peerDiscovery: [],
        services,
        // Node's default gater already allows private/loopback addresses; be explicit.
        connectionGater: {
          denyDialMultiaddr: async () => false
        }
      }
    ),
    {
      runOnLimitedConnections: true
    }
  )
  await helia.start()
  return helia
}

/**
 * @libp2p/yamux 8.0.3 sends a Data frame as large as the whole send window the remote
 * has granted (YamuxStream.sendData: toSend = min(sendWindowCapacity, buf)). rust yamux
 * (0.13/0.14, vendored in syncscope) auto-tunes stream windows past 1 MiB but rejects any
 * frame body over 1 MiB ("frame body is too large") and kills the whole connection.
 * --yamux-max-frame N splits outgoing Data frames at N bytes. Off by default.
 */
function capYamuxFrames (cap) {
  const orig = YamuxStream.prototype.sendData
  YamuxStream.prototype.sendData = function cappedSendData (buf) {
    if (buf.byteLength <= cap) return orig.call(this, buf)
    let sentBytes = 0
    let canSendMore = true
    while (buf.byteLength > 0 && canSendMore) {
      const n = Math.min(cap, buf.byteLength)
      const r = orig.call(this, buf.sublist(0, n))
      buf.consume(r.sentBytes)
      sentBytes += r.sentBytes
      canSendMore = r.canSendMore
      if (r.sentBytes < n) break
    }
    return { sentBytes, canSendMore }
  }
  log(`yamux outgoing Data frames capped at ${cap} bytes`)
}

async function addFile (helia, path) {
  const size = fs.statSync(path).size
  const fsys = unixfs(helia)
  const cid = await fsys.addByteStream(fs.createReadStream(path), importOptions())
  return { cid, bytes: size }
}

function connInfo (conn) {
  return {
    id: conn.id,
    peer: conn.remotePeer.toString(),
    addr: conn.remoteAddr.toString(),
    direction: conn.direction,
    limited: conn.limits != null,
    limits: conn.limits == null ? null : { bytes: conn.limits.bytes?.toString() ?? null, seconds: conn.limits.seconds ?? null },
    status: conn.status
  }
}

function bitswapInternals (helia) {
  const broker = helia.blockBrokers?.find(b => b.name === 'bitswap')
  return broker?.bitswap
}

/** Writes chunks to a file (if path given) with back-pressure. */
async function openSink (path) {
  if (path == null) {
    return { write: async () => {}, close: async () => {} }
  }
  const ws = fs.createWriteStream(path)
  await once(ws, 'open')
  return {
    write: async (buf) => {
      if (!ws.write(buf)) {
        await once(ws, 'drain')
      }
    },
    close: async () => {
      if (ws.writableFinished || ws.destroyed) return
      if (!ws.writableEnded) ws.end()
      await once(ws, 'finish')
    }
  }
}

function waitForStop (helia) {
  return new Promise(resolve => {
    let stopping = false
    const stop = (why) => {
      if (stopping) return
      stopping = true
      log(`stopping (${why})`)
      resolve(why)
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
    // stdin closing ends the node, but only when stdin is a pipe/socket: /dev/null or a
    // TTY must not stop it immediately.
    try {
      const st = fs.fstatSync(0)
      if (st.isFIFO() || st.isSocket()) {
        process.stdin.on('data', () => {})
        process.stdin.on('end', () => stop('stdin closed'))
        process.stdin.on('error', () => stop('stdin error'))
        process.stdin.resume()
      }
    } catch {}
  })
}

// ---------------------------------------------------------------- commands

async function cmdAdd (opts) {
  need(opts, 'file')
  const helia = await createOfflineHelia()
  try {
    const { cid, bytes } = await addFile(helia, opts.file)
    emit({ event: 'added', cid: cid.toString(), bytes })
  } finally {
    await helia.stop()
  }
}

async function cmdServe (opts) {
  need(opts, 'file')
  const listen = [...(opts.listen?.length ? opts.listen : DEFAULT_LISTEN)].filter(a => a !== 'none')
  let relay
  if (opts.relay != null) {
    relay = parseMultiaddr(opts.relay, '--relay')
    if (relay.getComponents().find(c => c.name === 'p2p') == null) {
      throw new UsageError('--relay must end in /p2p/<relay peer id>')
    }
    listen.push(`${relay.toString()}/p2p-circuit`)
  }
  const helia = await createNetworkedHelia({ listen, withPing: !opts['no-ping'] })
  const libp2p = helia.libp2p
  if (opts['limited-workaround']) applyLimitedWorkaround(helia)

  const announced = new Set()
  const announceConn = (conn) => {
    if (announced.has(conn.id)) return
    announced.add(conn.id)
    emit({ event: 'connected', ...connInfo(conn) })
  }
  libp2p.addEventListener('connection:open', (evt) => announceConn(evt.detail))
  libp2p.addEventListener('connection:close', (evt) => {
    emit({ event: 'disconnected', ...connInfo(evt.detail) })
  })

  const { cid, bytes } = await addFile(helia, opts.file)

  if (relay != null) {
    const timeoutMs = Number(opts['relay-timeout-ms'] ?? 30000)
    const deadline = Date.now() + timeoutMs
    while (!libp2p.getMultiaddrs().some(ma => ma.toString().includes('/p2p-circuit'))) {
      if (Date.now() > deadline) {
        throw new Error(`no circuit relay reservation on ${relay} after ${timeoutMs}ms`)
      }
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }

  libp2p.getConnections().forEach(announceConn)
  emit({
    event: 'ready',
    peer: libp2p.peerId.toString(),
    addrs: libp2p.getMultiaddrs().map(ma => ma.toString()),
    cid: cid.toString(),
    bytes,
    protocols: libp2p.getProtocols()
  })

  const why = await waitForStop(helia)
  await helia.stop()
  emit({ event: 'stopped', reason: why })
}

/**
 * Helia's bitswap cannot send on a *limited* connection (a relay v2 circuit whose
 * relay announced a duration/data limit, which a rust-libp2p relay always does):
 *  - its topology has no notifyOnLimitedConnection, so 'peer:connected' (which
 *    adds the peer to the wantlist broadcast set) never fires for such a peer;
 *  - Network.sendMessage calls libp2p.dialProtocol(peerId, ...) without
 *    runOnLimitedConnection, and libp2p ignores limited connections when looking
 *    for an existing one, so it dials again (or fails). This breaks both sending
 *    wants (fetch side) and sending blocks back (serve side).
 * With --limited-workaround (needed on BOTH ends when both are Helia) we
 * (1) let dialProtocol reuse an open limited connection when there is no
 * unlimited one and (2) announce peers on limited connections to bitswap
 * ourselves. Off by default, so a default run shows what an unmodified Helia does.
 */
function applyLimitedWorkaround (helia) {
  const libp2p = helia.libp2p
  const orig = libp2p.dialProtocol.bind(libp2p)
  libp2p.dialProtocol = async (peer, protocols, options = {}) => {
    if (!Array.isArray(peer) && peer?.type != null && typeof peer.toMultihash === 'function') {
      const open = libp2p.getConnections(peer).filter(c => c.status === 'open')
      const limited = open.find(c => c.limits != null)
      if (limited != null && !open.some(c => c.limits == null)) {
        return limited.newStream(protocols, { ...options, runOnLimitedConnection: true })
      }
    }
    return orig(peer, protocols, options)
  }
  const announce = (conn) => {
    if (conn.limits != null) {
      bitswapInternals(helia)?.network.safeDispatchEvent('peer:connected', { detail: conn.remotePeer })
    }
  }
  libp2p.addEventListener('connection:open', (evt) => announce(evt.detail))
  libp2p.getConnections().forEach(announce)
}

async function cmdFetch (opts) {
  need(opts, 'connect')
  need(opts, 'cid')
  const target = parseMultiaddr(opts.connect, '--connect')
  const cid = parseCid(opts.cid)
  const timeoutMs = Number(opts['timeout-ms'] ?? 120000)
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout-ms must be a positive number')

  const helia = await createNetworkedHelia({ listen: [], withPing: !opts['no-ping'] })
  const libp2p = helia.libp2p
  if (opts['limited-workaround']) applyLimitedWorkaround(helia)
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new Error(`fetch timed out after ${timeoutMs}ms`)), timeoutMs)
  const signal = controller.signal
  setMaxListeners(Infinity, signal)

  libp2p.addEventListener('connection:open', (evt) => {
    log(`connection open ${JSON.stringify(connInfo(evt.detail))}`)
  })
  libp2p.addEventListener('connection:close', (evt) => {
    log(`connection closed ${JSON.stringify(connInfo(evt.detail))}`)
  })

  // which connection delivered the blocks (internal bitswap event, test-only)
  const blockConns = new Map()
  bitswapInternals(helia)?.wantList.addEventListener('block', (evt) => {
    const c = evt.detail.connection
    const key = c.id
    const entry = blockConns.get(key) ?? { ...connInfo(c), blocks: 0 }
    entry.blocks++
    blockConns.set(key, entry)
  })

  const sink = await openSink(opts.out)
  const hash = createHash('sha256')
  let bytes = 0
  let t0
  let firstByteMs = null
  try {
    t0 = performance.now()
    const conn = await libp2p.dial(target, { signal })
    const dialMs = performance.now() - t0
    emit({ event: 'dialed', ...connInfo(conn), ms: Math.round(dialMs) })

    const fsys = unixfs(helia)
    for await (const buf of fsys.cat(cid, { signal })) {
      if (firstByteMs == null) firstByteMs = performance.now() - t0
      hash.update(buf)
      bytes += buf.byteLength
      await sink.write(buf)
    }
    const ms = performance.now() - t0
    await sink.close()

    // verify: the whole DAG must now be local and the byte count must match the
    // size recorded in the root node
    const stat = await fsys.stat(cid, { offline: true, extended: true, signal })
    if (BigInt(bytes) !== stat.size) {
      throw new Error(`incomplete fetch: got ${bytes} bytes, root says ${stat.size}`)
    }
    if (stat.localSize !== stat.size) {
      throw new Error(`incomplete fetch: local blockstore holds ${stat.localSize} of ${stat.size} bytes`)
    }

    emit({
      event: 'fetched',
      cid: cid.toString(),
      bytes,
      ms: Math.round(ms),
      dial_ms: Math.round(dialMs),
      first_byte_ms: firstByteMs == null ? null : Math.round(firstByteMs),
      mib_per_s: bytes === 0 ? null : Number(((bytes / 1048576) / (ms / 1000)).toFixed(2)),
      blocks: Number(stat.uniqueBlocks),
      sha256: hash.digest('hex'),
      block_connections: [...blockConns.values()],
      connections: libp2p.getConnections().map(connInfo)
    })
  } catch (err) {
    if (opts.out != null) {
      // never leave a partial output file behind
      await sink.close().catch(() => {})
      fs.rmSync(opts.out, { force: true })
    }
    if (signal.aborted) {
      const elapsed = t0 == null ? 0 : Math.round(performance.now() - t0)
      throw new Error(`fetch of ${cid} from ${target} timed out after ${timeoutMs}ms (${bytes} bytes received, ${elapsed}ms since dial)`)
    }
    throw err
  } finally {
    clearTimeout(timer)
    await helia.stop().catch(() => {})
  }
}

async function cmdCarExport (opts) {
  need(opts, 'file')
  need(opts, 'out')
  const helia = await createOfflineHelia()
  try {
    const { cid, bytes } = await addFile(helia, opts.file)
    const sink = await openSink(opts.out)
    let carBytes = 0
    for await (const buf of car(helia).export(cid, { offline: true })) {
      carBytes += buf.byteLength
      await sink.write(buf)
    }
    await sink.close()
    // count what was written
    let blocks = 0
    const it = await CarBlockIterator.fromIterable(fs.createReadStream(opts.out))
    for await (const _ of it) blocks++ // eslint-disable-line no-unused-vars
    emit({ event: 'car-exported', cid: cid.toString(), bytes, car: opts.out, car_bytes: carBytes, blocks })
  } finally {
    await helia.stop()
  }
}

/** Imports every block of a CARv1/v2 file, verifying sha2-256 multihashes. */
async function importCar (helia, path) {
  const it = await CarBlockIterator.fromIterable(fs.createReadStream(path))
  const roots = await it.getRoots()
  let blocks = 0
  let verified = 0
  async function * checked () {
    for await (const { cid, bytes } of it) {
      if (cid.multihash.code === sha256.code) {
        const digest = await sha256.digest(bytes)
        if (!Buffer.from(digest.digest).equals(Buffer.from(cid.multihash.digest))) {
          throw new Error(`block ${cid} in ${path} does not match its hash`)
        }
        verified++
      }
      blocks++
      yield { cid, bytes }
    }
  }
  await car(helia).import({ blocks: checked })
  return { roots, blocks, verified }
}

async function cmdCarImport (opts) {
  need(opts, 'car')
  const helia = await createOfflineHelia()
  try {
    const { roots, blocks, verified } = await importCar(helia, opts.car)
    emit({ event: 'car-imported', roots: roots.map(r => r.toString()), blocks, sha256_verified: verified })
  } finally {
    await helia.stop()
  }
}

async function cmdCatCar (opts) {
  need(opts, 'car')
  need(opts, 'cid')
  need(opts, 'out')
  const cid = parseCid(opts.cid)
  const helia = await createOfflineHelia()
  try {
    const { roots, blocks } = await importCar(helia, opts.car)
    const sink = await openSink(opts.out)
    const hash = createHash('sha256')
    let bytes = 0
    for await (const buf of unixfs(helia).cat(cid, { offline: true })) {
      hash.update(buf)
      bytes += buf.byteLength
      await sink.write(buf)
    }
    await sink.close()
    emit({ event: 'cat-car', cid: cid.toString(), roots: roots.map(r => r.toString()), blocks, bytes, sha256: hash.digest('hex') })
  } finally {
    await helia.stop()
  }
}

// ---------------------------------------------------------------- main

function parseCid (str) {
  try {
    return CID.parse(str)
  } catch (err) {
    throw new UsageError(`invalid --cid "${str}": ${err.message}`)
  }
}

function parseMultiaddr (str, flag) {
  try {
    return multiaddr(str)
  } catch (err) {
    throw new UsageError(`invalid ${flag} "${str}": ${err.message}`)
  }
}

function need (opts, name) {
  if (opts[name] == null || opts[name] === '') {
    throw new UsageError(`missing --${name}`)
  }
}

const USAGE = `usage: node --experimental-websocket --import ./polyfill.mjs helia-peer.mjs <command> [options]
  add        --file PATH
  serve      --file PATH [--listen MULTIADDR ...] [--relay MULTIADDR] [--relay-timeout-ms N (30000)]
             (--listen none: no direct listener, e.g. circuit-only with --relay)
  fetch      --connect MULTIADDR --cid CID [--out PATH] [--timeout-ms N (120000)]
  car-export --file PATH --out CAR
  car-import --car CAR
  cat-car    --car CAR --cid CID --out PATH
serve and fetch also take (all off by default, so the default is unmodified Helia):
  --limited-workaround   let bitswap send over limited (relayed) connections; needed on both Helia ends
  --yamux-max-frame N    split outgoing yamux Data frames at N bytes (rust yamux rejects bodies > 1 MiB)
  --no-ping              leave out the /ipfs/ping/1.0.0 service (rust peers then drop us after ~15 s)`

const COMMANDS = {
  add: cmdAdd,
  serve: cmdServe,
  fetch: cmdFetch,
  'car-export': cmdCarExport,
  'car-import': cmdCarImport,
  'cat-car': cmdCatCar
}

async function main () {
  const [command, ...rest] = process.argv.slice(2)
  if (command == null || command === '-h' || command === '--help') {
    process.stderr.write(USAGE + '\n')
    process.exit(command == null ? 2 : 0)
  }
  const fn = COMMANDS[command]
  if (fn == null) throw new UsageError(`unknown command "${command}"`)
  let values
  try {
    ({ values } = parseArgs({
      args: rest,
      strict: true,
      options: {
        file: { type: 'string' },
        out: { type: 'string' },
        car: { type: 'string' },
        cid: { type: 'string' },
        connect: { type: 'string' },
        listen: { type: 'string', multiple: true },
        relay: { type: 'string' },
        'relay-timeout-ms': { type: 'string' },
        'timeout-ms': { type: 'string' },
        'limited-workaround': { type: 'boolean' },
        'no-ping': { type: 'boolean' },
        'yamux-max-frame': { type: 'string' }
      }
    }))
  } catch (err) {
    throw new UsageError(err.message)
  }
  if (values['yamux-max-frame'] != null) {
    const cap = Number(values['yamux-max-frame'])
    if (!Number.isInteger(cap) || cap < 1024) throw new UsageError('--yamux-max-frame must be an integer >= 1024')
    capYamuxFrames(cap)
  }
  await fn(values)
}

main().then(() => {
  process.exit(0)
}, (err) => {
  const usage = err instanceof UsageError
  const message = err?.message ?? String(err)
  emit({ event: 'error', message })
  process.stderr.write(`helia-peer: error: ${message}\n`)
  if (usage) process.stderr.write(USAGE + '\n')
  else if (process.env.HELIA_PEER_STACK) process.stderr.write(`${err?.stack}\n`)
  process.exit(usage ? 2 : 1)
})
