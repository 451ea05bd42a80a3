// Browser to browser over direct WebRTC (libp2p spec webrtc/webrtc.md): two pages in a room meet
// through the relay's circuit, signal over it, and move their data over their own
// RTCPeerConnection; the relay then carries next to nothing. When ICE finds no path they stay on
// the circuit, say why, and still transfer.
import { expect, screenshot } from '../lib/assert.mjs';
import { circuitsClosed, relayedBytes, shareFile } from '../lib/share.mjs';

const MiB = 1024 * 1024;
const DIRECT = 'direct (WebRTC)';

// Every RTCPeerConnection the page makes, for a test to close.
const KEEP_PEER_CONNECTIONS = () => {
  const Native = window.RTCPeerConnection;
  window.__peerConnections = [];
  window.RTCPeerConnection = class extends Native {
    constructor(...args) {
      super(...args);
      window.__peerConnections.push(this);
    }
  };
};

async function linkOf(page) {
  const link = page.getByTestId('peer-link');
  await link.waitFor({ timeout: 20_000 });
  return link;
}

async function waitForDirect(page, who) {
  const link = await linkOf(page);
  await page.locator(`[data-testid="peer-link"][data-via="${DIRECT}"]`).waitFor({ timeout: 20_000 })
    .catch(async () => { throw new Error(`${who} never reached its peer directly: ${await link.textContent()}`); });
}

/// `page` shares `size` bytes in a fresh room that a second page joins, both on `transport`; once
/// each shows the other as direct, `work(other, cid)` runs, and the second page closes after it.
async function directPair({ page, relay, openPage }, transport, size, work) {
  const room = `direct-${transport}-${Date.now()}`;
  await page.goto(`${relay.url}?room=${room}&transport=${transport}`);
  const { cid } = await shareFile(page, size);
  const other = await openPage();
  try {
    await other.page.goto(`${relay.url}?room=${room}&transport=${transport}`);
    await waitForDirect(other.page, 'the fetching page');
    await waitForDirect(page, 'the sharing page');
    await work(other.page, cid);
    if (other.errors.length) throw new Error(`errors in the fetching tab:\n  ${other.errors.join('\n  ')}`);
  } finally {
    await other.close();
  }
}

async function fetchByCid(page, cid) {
  await page.getByTestId('cid-input').fill(cid);
  await page.getByTestId('fetch-button').click();
  const done = page.getByTestId('fetch-done');
  await done.waitFor({ timeout: 120_000 });
  return done.textContent();
}

export default {
  'two pages connect directly over WebRTC and 16 MiB between them barely touches the relay': (ctx) =>
    directPair(ctx, 'ws', 16 * MiB, async (fetcher, cid) => {
      const { relay } = ctx;
      await circuitsClosed(relay);
      const before = await relayedBytes(relay);
      expect(before, 'bytes relayed before, the signalling included').toBeAtLeast(1);
      const outcome = await fetchByCid(fetcher, cid);
      expect(outcome, 'outcome').toMatch(new RegExp(`fetched and verified ${cid}: 16.00 MiB in .*, 65 blocks from 1 peer`));
      const relayed = (await relayedBytes(relay)) - before;
      console.log(`     the relay carried ${relayed} bytes during the 16 MiB transfer (${(100 * relayed / (16 * MiB)).toFixed(3)} %)`);
      expect(relayed, 'bytes through the relay during the transfer').toBeAtMost(0.01 * 16 * MiB);
      await screenshot(fetcher, 'fetch-browser-to-browser-direct-webrtc');
    }),

  // The circuit between them then runs through the relay's WebRTC-direct address, and so does the
  // `/webrtc` address the dialling page derives from it: only the browser-to-browser transport may
  // take that address, never the WebRTC-direct one (which dialled the relay instead).
  'two pages on WebRTC-direct to the relay meet directly over WebRTC and stay in their room': (ctx) =>
    directPair(ctx, 'webrtc-direct', MiB, async (fetcher, cid) => {
      const outcome = await fetchByCid(fetcher, cid);
      expect(outcome, 'outcome').toMatch(new RegExp(`fetched and verified ${cid}: 1.00 MiB in .*, 5 blocks from 1 peer`));
      for (const p of [ctx.page, fetcher]) {
        await p.getByTestId('member-count').filter({ hasText: '1 other peer' }).waitFor({ timeout: 5_000 });
      }
    }),

  // `?ice=relay` lets ICE use TURN candidates only, and there is no TURN server: no path exists.
  'when ICE finds no path two pages stay on the circuit, say why, and still transfer': async ({ page, relay, openPage }) => {
    const room = `nodirect-${Date.now()}`;
    await page.goto(`${relay.url}?room=${room}&transport=ws&ice=relay`);
    const { cid, link } = await shareFile(page, 700_000);
    const other = await openPage();
    try {
      await other.page.goto(link);
      const done = other.page.getByTestId('fetch-done');
      await done.waitFor({ timeout: 60_000 });
      expect(await done.textContent(), 'outcome').toMatch(new RegExp(`fetched and verified ${cid}: 0.67 MiB`));
      // Whichever page dialled says why: the one with the smaller peer id.
      const reasons = [page, other.page].map((p) => p.getByTestId('peer-not-direct'));
      const why = await Promise.any(reasons.map((r) => r.waitFor({ timeout: 30_000 }).then(() => r)))
        .catch(() => { throw new Error('neither page said why it is not direct'); });
      expect(await why.textContent(), 'reason').toMatch(/direct WebRTC failed: .+/);
      console.log(`     ${(await why.textContent()).trim()}`);
      for (const [p, who] of [[page, 'sharing'], [other.page, 'fetching']]) {
        expect(await (await linkOf(p)).getAttribute('data-via'), `the ${who} page's link`).toBe('relayed (circuit)');
      }
      await screenshot(other.page, 'fetch-browser-to-browser-ice-failed');
      if (other.errors.length) throw new Error(`errors in the fetching tab:\n  ${other.errors.join('\n  ')}`);
    } finally {
      await other.close();
    }
  },

  // The page that did not dial closes its RTCPeerConnection, as if its network had gone. The
  // other page sees its connection end, dials the circuit again and upgrades anew; the page that
  // closed it (which gets no event for its own close) drops its dead connection too, and fetches
  // over the new one.
  'when the direct connection drops, the pair goes back through the relay and is direct again': async ({ page, relay, openPage }) => {
    const room = `redial-${Date.now()}`;
    const other = await openPage();
    try {
      for (const p of [page, other.page]) {
        await p.addInitScript(KEEP_PEER_CONNECTIONS);
        await p.goto(`${relay.url}?room=${room}&transport=ws`);
      }
      await waitForDirect(other.page, 'the second page');
      await waitForDirect(page, 'the first page');
      const ids = await Promise.all([page, other.page].map(async (p) => (await p.getByTestId('own-peer-id').textContent()).trim()));
      const [dialler, answerer] = ids[0] < ids[1] ? [page, other.page] : [other.page, page];
      const { cid } = await shareFile(dialler, 700_000);
      await answerer.evaluate(() => window.__peerConnections.forEach((pc) => pc.close()));
      for (const [p, who] of [[dialler, 'dialler'], [answerer, 'answerer']]) {
        await p.waitForFunction(() => performance.getEntriesByName('syncscope:peer-connected:direct (WebRTC)').length >= 2, null, { timeout: 40_000 })
          .catch(() => { throw new Error(`the ${who} never reached its peer directly again`); });
      }
      const outcome = await fetchByCid(answerer, cid);
      expect(outcome, 'outcome').toMatch(new RegExp(`fetched and verified ${cid}: 0.67 MiB in .*, 4 blocks from 1 peer`));
      if (other.errors.length) throw new Error(`errors in the second page:\n  ${other.errors.join('\n  ')}`);
    } finally {
      await other.close();
    }
  },
};
