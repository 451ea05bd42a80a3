// browser-peer.mjs: a js-libp2p page, for the browser-to-browser interop test: Helia 7's Bitswap
// on js-libp2p 3 with @libp2p/webrtc, reaching syncscope's relay over WebSocket and other pages
// over `/webrtc` through that relay. The e2e suite bundles it with esbuild (`bundleBrowserPeer`)
// and drives it through `window.browserPeer`; every call returns plain JSON.

import { withBitswap } from '@helia/bitswap'
import { withLibp2pLight } from '@helia/libp2p'
import { unixfs } from '@helia/unixfs'
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { identify } from '@libp2p/identify'
import { noise } from '@libp2p/noise'
import { ping } from '@libp2p/ping'
import { webRTC } from '@libp2p/webrtc'
import { webSockets } from '@libp2p/websockets'
import { yamux } from '@libp2p/yamux'
import { multiaddr } from '@multiformats/multiaddr'
import { MemoryBlockstore } from 'blockstore-core'
import { MemoryDatastore } from 'datastore-core'
import { createHeliaLight } from 'helia'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { CID } from 'multiformats/cid'

// The same UnixFS layout as syncscope and helia-peer.mjs: 256 KiB raw leaves, 174 links a node.
const IMPORT = {
  cidVersion: 1,
  rawLeaves: true,
  chunker: fixedSize({ chunkSize: 262_144 }),
  layout: balanced({ maxChildrenPerNode: 174 }),
  reduceSingleLeafToSelf: true,
  wrapWithDirectory: false
}

let helia

function connection (conn) {
  return {
    peer: conn.remotePeer.toString(),
    addr: conn.remoteAddr.toString(),
    limited: conn.limits != null,
    status: conn.status
  }
}

async function hex (bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  return [...digest].map(b => b.toString(16).padStart(2, '0')).join('')
}

function concat (chunks) {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
  let at = 0
  for (const c of chunks) {
    all.set(c, at)
    at += c.byteLength
  }
  return all
}

/** Starts the node with a reservation on `relay` (`/ip4/…/ws/p2p/<relay>`); returns its id and its `/webrtc` addresses. */
async function start (relay, timeoutMs = 20_000) {
  helia = withBitswap(withLibp2pLight(
    createHeliaLight({ blockstore: new MemoryBlockstore(), datastore: new MemoryDatastore() }),
    {
      addresses: { listen: [`${relay}/p2p-circuit`, '/webrtc'] },
      transports: [webSockets(), webRTC(), circuitRelayTransport()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      peerDiscovery: [],
      // ping: js-libp2p's connection monitor closes a connection whose pings go unanswered.
      services: { identify: identify(), ping: ping() },
      // The browser default refuses private addresses, and everything here is on loopback.
      connectionGater: { denyDialMultiaddr: async () => false }
    }
  ))
  await helia.start()
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const addrs = helia.libp2p.getMultiaddrs().map(String).filter(a => a.includes('/p2p-circuit/webrtc'))
    if (addrs.length > 0) return { peer: helia.libp2p.peerId.toString(), addrs }
    if (Date.now() > deadline) throw new Error(`no /webrtc address through ${relay} after ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

/** Imports `size` random bytes as a UnixFS file; returns its CID and SHA-256. */
async function add (size) {
  const bytes = new Uint8Array(size)
  for (let at = 0; at < size; at += 65_536) crypto.getRandomValues(bytes.subarray(at, at + 65_536))
  const cid = await unixfs(helia).addBytes(bytes, IMPORT)
  return { cid: cid.toString(), sha256: await hex(bytes) }
}

/** Dials `addr`, fetches `cid` over Bitswap, and says which connections delivered its blocks. */
async function fetch (addr, cid, timeoutMs = 30_000) {
  const signal = AbortSignal.timeout(timeoutMs)
  const dialled = await helia.libp2p.dial(multiaddr(addr), { signal })
  const delivered = new Map()
  const bitswap = helia.blockBrokers.find(b => b.name === 'bitswap')?.bitswap
  bitswap?.wantList.addEventListener('block', (evt) => {
    const addr = evt.detail.connection.remoteAddr.toString()
    delivered.set(addr, (delivered.get(addr) ?? 0) + 1)
  })
  const chunks = []
  for await (const chunk of unixfs(helia).cat(CID.parse(cid), { signal })) chunks.push(chunk)
  const bytes = concat(chunks)
  return {
    dialled: connection(dialled),
    bytes: bytes.byteLength,
    sha256: await hex(bytes),
    blocksByConnection: Object.fromEntries(delivered)
  }
}

function connections () {
  return helia.libp2p.getConnections().map(connection)
}

window.browserPeer = { start, add, fetch, connections }
