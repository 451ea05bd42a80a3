// Headless Chromium driven over the DevTools Protocol directly, for measurements.
//
// Playwright enables the Network domain on every page it controls. Chromium then copies each
// WebSocket message, base64-encoded, into a DevTools event for Playwright to parse: during a
// 64 MiB fetch that took about half a core (the browser process and Node), on a 2-core machine
// where the page itself needs one. This client enables only Page and Runtime, so what it
// measures is what a user's browser does.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CHROMIUM, CHROMIUM_ARGS } from './browser.mjs';
import { processTreeCpuSnapshot } from './cpu.mjs';

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/// One DevTools connection over `--remote-debugging-pipe`: JSON messages ended by NUL, written to
/// Chromium's fd 3 and read from its fd 4.
class Connection {
  constructor(toChrome, fromChrome) {
    this.toChrome = toChrome;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Map();
    let buffered = '';
    fromChrome.setEncoding('utf8');
    fromChrome.on('data', (text) => {
      const parts = (buffered + text).split('\0');
      buffered = parts.pop();
      for (const part of parts) this.dispatch(JSON.parse(part));
    });
  }

  dispatch(message) {
    const call = this.pending.get(message.id);
    if (call) {
      this.pending.delete(message.id);
      if (message.error) call.reject(new Error(`${call.method}: ${message.error.message}`));
      else call.resolve(message.result);
      return;
    }
    for (const listener of this.listeners.get(message.sessionId) ?? []) listener(message.method, message.params);
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    this.toChrome.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
    return new Promise((resolve, reject) => this.pending.set(id, { method, resolve, reject }));
  }

  listen(sessionId, listener) {
    this.listeners.set(sessionId, [...(this.listeners.get(sessionId) ?? []), listener]);
  }
}

/// Starts Chromium with a throw-away profile and returns `{ version, newPage, newStoredPage,
/// cpuSnapshot, close }`.
export async function launchCdpBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'syncscope-chromium-'));
  const chrome = spawn(CHROMIUM, [...CHROMIUM_ARGS, '--remote-debugging-pipe', '--window-size=1280,800', `--user-data-dir=${profile}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => chrome.once('exit', resolve));
  const connection = new Connection(chrome.stdio[3], chrome.stdio[4]);
  const { product } = await connection.send('Browser.getVersion');
  return {
    version: () => product.split('/').pop(),
    /// The CPU time of the browser's processes so far (`processTreeCpuSnapshot`).
    cpuSnapshot: () => processTreeCpuSnapshot(chrome.pid),
    newPage: () => newPage(connection, true),
    /// A page in the browser's own context, whose storage is on disk in the profile (a fresh
    /// context keeps IndexedDB in memory), after clearing `origin`'s IndexedDB and the HTTP
    /// cache, so that it starts as a first visit does.
    async newStoredPage(origin) {
      const page = await newPage(connection, false);
      await page.clearIndexedDb(origin);
      await page.send('Network.clearBrowserCache');
      return page;
    },
    async close() {
      await Promise.race([connection.send('Browser.close').catch(() => {}), delay(5_000)]);
      if (chrome.exitCode === null) chrome.kill('SIGKILL');
      await exited;
      // Chromium's helper processes may still be writing to the profile as the browser exits;
      // a profile left in /tmp is not worth failing a run for.
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      } catch (e) {
        console.error(`note: could not remove ${profile}: ${e.message}`);
      }
    },
  };
}

/// A page in a fresh browser context, or in the browser's own unless `fresh`. `errors`
/// collects console errors and uncaught exceptions.
async function newPage(connection, fresh) {
  const { browserContextId } = fresh ? await connection.send('Target.createBrowserContext') : {};
  const { targetId } = await connection.send('Target.createTarget', { url: 'about:blank', browserContextId });
  const { sessionId } = await connection.send('Target.attachToTarget', { targetId, flatten: true });
  const send = (method, params) => connection.send(method, params, sessionId);
  const errors = [];
  // Main-frame documents committed so far, by loader id, and who waits for which.
  const committed = new Set();
  const waiting = new Map();
  connection.listen(sessionId, (method, params) => {
    if (method === 'Page.frameNavigated' && !params.frame.parentId) {
      committed.add(params.frame.loaderId);
      waiting.get(params.frame.loaderId)?.();
    } else if (method === 'Runtime.consoleAPICalled' && params.type === 'error') {
      errors.push(`console: ${params.args.map((a) => a.value ?? a.description).join(' ')}`);
    } else if (method === 'Runtime.exceptionThrown') {
      errors.push(`page error: ${params.exceptionDetails.exception?.description ?? params.exceptionDetails.text}`);
    }
  });
  await Promise.all([send('Page.enable'), send('Runtime.enable')]);

  /// The value of `expression` in the page, awaited if it is a promise.
  async function evaluate(expression) {
    const { result, exceptionDetails } = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
    return result.value;
  }

  /// Waits until an element matches `selector` in the current document; a navigation in between
  /// (the evaluation's context destroyed) is waited through.
  async function waitFor(selector, timeoutMs) {
    const appeared = `new Promise((resolve) => {
      const check = () => document.querySelector(${JSON.stringify(selector)}) && (observer.disconnect(), resolve(true));
      const observer = new MutationObserver(check);
      observer.observe(document, { subtree: true, childList: true, attributes: true });
      check();
    })`;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const outcome = await Promise.race([evaluate(appeared).catch(() => false), delay(deadline - Date.now())]);
      if (outcome) return;
      await delay(20);
    }
    throw new Error(`no element matched ${selector} within ${timeoutMs / 1000} s`);
  }

  return {
    send,
    errors,
    evaluate,
    waitFor,
    /// Clears `origin`'s IndexedDB, keeping every cache.
    clearIndexedDb: (origin) => send('Storage.clearDataForOrigin', { origin, storageTypes: 'indexeddb' }),
    addInitScript: (source) => send('Page.addScriptToEvaluateOnNewDocument', { source }),
    /// Navigates and returns once the new document is committed.
    async goto(url) {
      const { errorText, loaderId } = await send('Page.navigate', { url });
      if (errorText) throw new Error(`navigating to ${url}: ${errorText}`);
      if (committed.has(loaderId)) return;
      const commit = new Promise((resolve) => waiting.set(loaderId, () => resolve(true)));
      const done = await Promise.race([commit, delay(30_000).then(() => false)]);
      waiting.delete(loaderId);
      if (!done) throw new Error(`navigating to ${url}: not committed within 30 s`);
    },
    /// `data-NAME` of the first element matching `selector`, or null.
    attr: (selector, name) => evaluate(`document.querySelector(${JSON.stringify(selector)})?.getAttribute(${JSON.stringify(`data-${name}`)}) ?? null`),
    isPresent: (selector) => evaluate(`document.querySelector(${JSON.stringify(selector)}) !== null`),
    text: (selector) => evaluate(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? null`),
    close: () => (browserContextId
      ? connection.send('Target.disposeBrowserContext', { browserContextId })
      : connection.send('Target.closeTarget', { targetId })),
  };
}
