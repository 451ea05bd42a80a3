// Browser to browser in `cargo xtask bench browser`: two fresh pages (browser contexts) in one
// headless Chromium. The ceiling is a plain RTCDataChannel between them; the transfers are a
// Bitswap fetch of a file one page shares, through the relay's circuit or over direct WebRTC,
// with the bytes and CPU time the relay spent meanwhile.
import { cpuSecondsBetween } from '../lib/cpu.mjs';
import { circuitsClosed, pickRandomFile, relayedBytes } from '../lib/share.mjs';

const DIRECT = 'direct (WebRTC)';
const TIMEOUT = 120_000;

async function withPages(browser, count, work) {
  const pages = [];
  try {
    for (let i = 0; i < count; i++) pages.push(await browser.newPage());
    return await work(...pages);
  } finally {
    for (const page of pages) await page.close();
  }
}

// One end of a plain RTCDataChannel, on a page of the relay's origin. Candidates are gathered in
// full before the description is handed over, so no trickling is needed.
const PEER = `
  window.pc = new RTCPeerConnection();
  window.gathered = () => new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve(pc.localDescription.sdp);
    pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve(pc.localDescription.sdp));
  });
`;

/// `size` bytes in `messageSize`-byte messages over a plain RTCDataChannel from one page to
/// another, with the flow control of the node's own data channels (pause at 64 KiB buffered,
/// resume at 32 KiB; `vendor/libp2p-webrtc-websys`). With megabytes buffered (js-libp2p pauses
/// at 2 MiB; this ceiling used to at 4 MiB) Chromium stalls for seconds early in the transfer,
/// and the ceiling would be no ceiling. From the first send to the last byte received, both read
/// off the same clock.
export async function dataChannelCeiling(browser, relay, size, messageSize) {
  return withPages(browser, 2, async (a, b) => {
    for (const page of [a, b]) {
      await page.goto(new URL('healthz', relay.url).href);
      await page.evaluate(PEER);
    }
    await b.evaluate(`window.received = new Promise((resolve) => pc.ondatachannel = ({ channel }) => {
      channel.binaryType = 'arraybuffer';
      let got = 0;
      channel.onmessage = (m) => { got += m.data.byteLength; if (got >= ${size}) resolve(Date.now()); };
    }); 0`);
    const offer = await a.evaluate(`(async () => {
      window.dc = pc.createDataChannel('bench');
      await pc.setLocalDescription(await pc.createOffer());
      return gathered();
    })()`);
    const answer = await b.evaluate(`(async () => {
      await pc.setRemoteDescription({ type: 'offer', sdp: ${JSON.stringify(offer)} });
      await pc.setLocalDescription(await pc.createAnswer());
      return gathered();
    })()`);
    const started = await a.evaluate(`(async () => {
      await pc.setRemoteDescription({ type: 'answer', sdp: ${JSON.stringify(answer)} });
      if (dc.readyState !== 'open') await new Promise((r) => dc.onopen = r);
      dc.bufferedAmountLowThreshold = 32 << 10;
      const message = new Uint8Array(${messageSize}).fill(7);
      const started = Date.now();
      for (let sent = 0; sent < ${size}; sent += message.length) {
        if (dc.bufferedAmount >= 64 << 10) await new Promise((r) => dc.onbufferedamountlow = r);
        dc.send(message);
      }
      return started;
    })()`);
    const finished = await b.evaluate('received');
    return { bytes: size, elapsedMs: finished - started };
  });
}

/// In the page: from its node's start (when it dials the relay) until its link to the other page
/// came up over `via`, plus from the fetch's start to its first byte. The bench's own wait
/// between the two is left out.
const dialToFirstByte = (via) => `(() => {
  const at = (name) => performance.getEntriesByName('syncscope:' + name).at(-1)?.startTime;
  return at(${JSON.stringify(`peer-connected:${via}`)}) - at('node-started') + at('fetch-first-byte') - at('fetch-started');
})()`;

/// Page `a` shares `size` bytes in a fresh room; page `b` joins and, once it reaches `a` the way
/// asked (`direct`: over direct WebRTC, once the circuit has closed; else through the relay's
/// circuit, with `?direct=off`), fetches them. The relay's circuit bytes and CPU time are read just before and after the fetch.
export async function b2bFetch(browser, relay, size, direct) {
  return withPages(browser, 2, async (a, b) => {
    const query = `room=bench-b2b-${Date.now()}&transport=ws${direct ? '' : '&direct=off'}`;
    await a.goto(`${relay.url}?${query}`);
    await a.waitFor('[data-testid="file-input"]', TIMEOUT);
    await a.evaluate(pickRandomFile(size));
    await a.waitFor('[data-testid="shared"] li code', TIMEOUT);
    const cid = (await a.text('[data-testid="shared"] li code')).trim();
    await b.goto(`${relay.url}?${query}`);
    const link = direct ? `[data-testid="peer-link"][data-via="${DIRECT}"]` : '[data-testid="peer-link"]';
    await b.waitFor(link, 30_000);
    // The page shows "direct" as the WebRTC connection comes up, and its circuit closes some
    // 50 ms later; a fetch started in between sends its first blocks over the circuit.
    if (direct) await circuitsClosed(relay);
    const [bytesBefore, cpuBefore] = [await relayedBytes(relay), relay.cpuSnapshot()];
    await b.evaluate(`(() => {
      const input = document.querySelector('[data-testid="cid-input"]');
      input.value = ${JSON.stringify(cid)};
      input.dispatchEvent(new Event('input', { bubbles: true }));
      document.querySelector('[data-testid="fetch-button"]').click();
    })()`);
    await b.waitFor('[data-testid="fetch-done"], [data-testid="transfer-error"]', TIMEOUT);
    if (await b.isPresent('[data-testid="transfer-error"]')) throw new Error(await b.text('[data-testid="transfer-error"]'));
    const relayed = (await relayedBytes(relay)) - bytesBefore;
    const relayCpuS = cpuSecondsBetween(cpuBefore, relay.cpuSnapshot());
    const done = '[data-testid="fetch-done"]';
    const bytes = Number(await b.attr(done, 'bytes'));
    if (bytes !== size) throw new Error(`fetched ${bytes} bytes where ${size} were shared`);
    const fromStore = Number(await b.attr(done, 'from-store'));
    if (fromStore > 0) throw new Error(`${fromStore} blocks came from the fetching page's own store, not from the other page`);
    for (const page of [a, b]) if (page.errors.length) throw new Error(page.errors.join('; '));
    const firstByteMs = await b.evaluate(dialToFirstByte(direct ? DIRECT : 'relayed (circuit)'));
    return { bytes, elapsedMs: Number(await b.attr(done, 'elapsed-ms')), relayed, relayCpuS, firstByteMs };
  });
}
