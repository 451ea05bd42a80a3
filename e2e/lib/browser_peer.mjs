// A js-libp2p page (interop/helia/browser-peer.mjs, Helia's Bitswap with @libp2p/webrtc), bundled
// with esbuild and served from loopback as our page is: a page Playwright fulfils itself counts as
// public, and Chromium's local network access checks then refuse its WebSocket to the relay.
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const heliaDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'interop', 'helia');

let bundled;

async function bundle() {
  // esbuild lives beside Helia in interop/helia, where `cargo xtask test` installs it.
  const { build } = await import(join(heliaDir, 'node_modules', 'esbuild', 'lib', 'main.js'));
  const out = await build({
    entryPoints: [join(heliaDir, 'browser-peer.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'error',
  });
  return out.outputFiles[0].text;
}

const PAGE = '<!doctype html><title>js-libp2p peer</title><script type="module" src="peer.js"></script>';

/// Serves the page and its bundle on a free loopback port until `close`.
async function serve(script) {
  const server = createServer((req, res) => {
    const js = req.url.endsWith('.js');
    res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html' });
    res.end(js ? script : PAGE);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() };
}

/// Opens `page` as the js-libp2p page and starts its node with a reservation on the relay's
/// WebSocket address; returns its peer id and its `/p2p-circuit/webrtc` addresses.
export async function startBrowserPeer(page, relay) {
  bundled ??= bundle();
  const server = await serve(await bundled);
  try {
    await page.goto(server.url);
    await page.waitForFunction(() => window.browserPeer !== undefined);
  } finally {
    server.close();
  }
  const ws = relay.addrs.find((a) => a.includes('/ws/'));
  return page.evaluate((addr) => window.browserPeer.start(addr), ws);
}
