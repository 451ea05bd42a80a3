// Starts the real relay binary on free ports with a throw-away data directory.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { threadsCpuSnapshot } from './cpu.mjs';

const READY = /syncscope relay ready: (http:\/\/\S+)/;

// A debug relay takes about 36 s to prepare 16 MiB of demo content for three seeds (hashing at
// opt-level 0): `readyMs` allows for that.
// `dataDir`: start in a relay's kept data directory (see `stop`), as the same relay again.
export async function startRelay({ bin, dist, args = ['--seed-peers', '2', '--seed-content', '2MiB'], readyMs = 30_000, dataDir }) {
  dataDir ??= mkdtempSync(join(tmpdir(), 'syncscope-e2e-'));
  const child = spawn(bin, [
    '--dist', dist, '--data-dir', dataDir,
    '--http-port', '0', '--ws-port', '0', '--webrtc-port', '0', '--tcp-port', '0',
    ...args,
  ], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const log = [];
  const printed = [];
  createInterface({ input: child.stderr }).on('line', (l) => log.push(l));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay not ready after ${readyMs / 1000} s:\n${log.join('\n')}`)), readyMs);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`relay exited with ${code}:\n${log.join('\n')}`)); });
    createInterface({ input: child.stdout }).on('line', (line) => {
      printed.push(line);
      const m = READY.exec(line);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
  });
  return {
    url,
    log,
    dataDir,
    /** The relay process's CPU time so far (seed peers included), per thread to the
        nanosecond (`threadsCpuSnapshot`): a 16 MiB transfer takes it only 7 to 10 ticks. */
    cpuSnapshot: () => threadsCpuSnapshot(child.pid),
    /** The libp2p addresses the relay printed, each ending in its peer id. */
    addrs: printed.filter((l) => l.startsWith('libp2p: ')).map((l) => l.slice('libp2p: '.length)),
    /** The share link the relay printed for its seed peers' demo content. */
    shareLink: printed.find((l) => l.startsWith('share link: '))?.slice('share link: '.length),
    /** `keepData`: leave the data directory for a restart (the caller removes it). */
    /// `leaving`: a page to take off the relay first; left on it, the page would dial the
    /// stopped relay again, and the browser logs each refused dial as an error in the page.
    async stop({ keepData = false, leaving } = {}) {
      await leaving?.goto('about:blank');
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
