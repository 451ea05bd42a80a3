// Child processes for the interop matrix: the syncscope binary, Helia and kubo, each printing
// lines that the matrix waits for. Every process is stopped at the end, whatever happened.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const running = new Set();

/** Starts `cmd`; its stdout lines can be awaited with `waitFor`, stderr is kept for errors. */
export function start(name, cmd, args, { cwd, env } = {}) {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const log = [];
  const waiters = new Set();
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters) w.check();
  });
  createInterface({ input: child.stderr }).on('line', (line) => log.push(line));
  child.on('error', (e) => log.push(`cannot start ${cmd}: ${e.message}`));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    running.delete(proc);
    for (const w of waiters) w.check();
    resolve(code ?? signal);
  }));
  const proc = {
    name,
    lines,
    exited,
    /** The first stdout line (seen or to come) that `pick` maps to something other than undefined. */
    waitFor(pick, what, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const waiter = {
          check() {
            try {
              for (const line of lines) {
                const found = pick(line);
                if (found !== undefined) return done(() => resolve(found));
              }
            } catch (e) {
              return done(() => reject(e));
            }
            if (child.exitCode !== null || child.signalCode !== null) {
              done(() => reject(new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before ${what}\n${tail(lines, log)}`)));
            }
          },
        };
        const timer = setTimeout(() => done(() => reject(new Error(`${name}: no ${what} after ${timeoutMs / 1000} s\n${tail(lines, log)}`))), timeoutMs);
        function done(settle) {
          clearTimeout(timer);
          waiters.delete(waiter);
          settle();
        }
        waiters.add(waiter);
        waiter.check();
      });
    },
    /** The first JSON line whose `event` is `event`; an `error` event fails at once. */
    waitForEvent(event, timeoutMs) {
      return proc.waitFor((line) => {
        const json = parseJson(line);
        if (json?.event === 'error') throw new Error(`${name}: ${json.message}`);
        return json?.event === event ? json : undefined;
      }, `"${event}"`, timeoutMs);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
  running.add(proc);
  return proc;
}

export async function stopAll() {
  await Promise.all([...running].map((p) => p.stop()));
}

function parseJson(line) {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function tail(lines, log) {
  return [...lines.slice(-10), ...log.slice(-20)].map((l) => `    ${l}`).join('\n');
}
