// What a page fetches is kept in IndexedDB: a reload keeps the peer id and resumes a fetch from
// what had been stored, and two tabs of one browser are two peers with a store each.
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect, screenshot } from '../lib/assert.mjs';

const DONE_TIMEOUT = 120_000;

async function attribute(page, testId, name) {
  return Number(await page.getByTestId(testId).getAttribute(name));
}

/**
 * Records in an object store of the page's database, read the way any page script would; with
 * `firstByte`, only those whose binary key starts with it.
 */
const countRecords = (page, store, firstByte) => page.evaluate(([store, firstByte]) => new Promise((resolve, reject) => {
  const open = indexedDB.open('syncscope-node-0');
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const keys = firstByte === undefined
      ? undefined
      : IDBKeyRange.bound(new Uint8Array([firstByte]), new Uint8Array([firstByte + 1]), false, true);
    const count = db.transaction(store).objectStore(store).count(keys);
    count.onsuccess = () => { db.close(); resolve(count.result); };
    count.onerror = () => reject(count.error);
  };
}), [store, firstByte]);

export default {
  'a fetch cut short by a reload resumes, taking every stored block from IndexedDB': async ({ page, startRelay }) => {
    const relay = await startRelay({ args: ['--seed-peers', '1', '--seed-content', '32MiB'], readyMs: 180_000 });
    try {
      await page.goto(relay.shareLink.replace(/^http:\/\/[^/]+\//, relay.url));
      await page.waitForFunction(
        () => Number(document.querySelector('[data-testid="fetch-progress"]')?.dataset.bytes ?? 0) >= 8 << 20,
        null,
        { timeout: DONE_TIMEOUT },
      );
      expect(await page.getByTestId('storage').textContent(), 'storage').toMatch(/IndexedDB syncscope-node-0/);
      const peerId = await page.getByTestId('own-peer-id').textContent();
      await page.reload();

      const done = page.getByTestId('fetch-done');
      await done.waitFor({ timeout: DONE_TIMEOUT });
      expect(await page.getByTestId('own-peer-id').textContent(), 'peer id after the reload').toBe(peerId);
      const stored = await attribute(page, 'storage', 'data-blocks-at-start');
      const blocks = Number(await done.getAttribute('data-blocks'));
      const fromStore = Number(await done.getAttribute('data-from-store'));
      expect(stored > 0 && stored < blocks, `part of the ${blocks} blocks stored before the reload (${stored})`).toBe(true);
      expect(fromStore, 'blocks taken from the store: every one stored before the reload').toBe(stored);
      expect(await done.textContent(), 'outcome').toMatch(/fetched and verified .*: 32.00 MiB.*already stored here/);
      await screenshot(page, 'fetch-resumed-after-reload');
    } finally {
      await relay.stop({ leaving: page });
    }
  },

  'a fetch cut short by a lost relay goes on once the relay is back': async ({ page, startRelay }) => {
    const args = ['--seed-peers', '1', '--seed-content', '32MiB'];
    let relay = await startRelay({ args, readyMs: 180_000 });
    const dataDir = relay.dataDir;
    try {
      await page.goto(relay.shareLink.replace(/^http:\/\/[^/]+\//, relay.url));
      await page.waitForFunction(
        () => Number(document.querySelector('[data-testid="fetch-progress"]')?.dataset.bytes ?? 0) >= 8 << 20,
        null,
        { timeout: DONE_TIMEOUT },
      );
      // The same relay again: its identity and seed in the data directory, on its WebSocket port.
      const wsPort = relay.addrs.find((a) => a.includes('/ws/')).match(/\/tcp\/(\d+)\/ws/)[1];
      await relay.stop({ keepData: true });
      relay = await startRelay({ args: [...args, '--ws-port', wsPort], readyMs: 180_000, dataDir });

      const done = page.getByTestId('fetch-done');
      await done.waitFor({ timeout: DONE_TIMEOUT });
      expect(Number(await done.getAttribute('data-duplicates')), 'duplicate blocks').toBe(0);
      expect(await done.textContent(), 'outcome').toMatch(/fetched and verified .*: 32.00 MiB/);
      await screenshot(page, 'fetch-resumed-after-relay-restart');
    } finally {
      await relay.stop({ leaving: page });
    }
  },

  'pull-sync chunks kept in IndexedDB are the reserve again after a reload': async ({ page, relay }) => {
    await page.goto(`${relay.url}?transport=ws`);
    const storedChunks = () => countRecords(page, 'chunks');
    let [last, stored] = [-1, 0];
    for (let i = 0; i < 60 && !(stored > 0 && stored === last); i++) {
      await page.waitForTimeout(500);
      [last, stored] = [stored, await storedChunks()];
    }
    expect(stored, 'chunks pulled from the seed and written').toBeAtLeast(1);
    console.log(`     ${stored} chunks in IndexedDB before the reload`);
    await page.reload();
    await page.waitForFunction(() => document.querySelector('[data-testid="storage"]')?.dataset.chunksAtStart !== undefined);
    // Pull-sync may still write between the count and the reload, and goes on after it: the
    // reserve at start lies between what was stored before and what is stored now.
    const atStart = await attribute(page, 'storage', 'data-chunks-at-start');
    expect(atStart, 'chunks in the reserve at start, at least those stored before the reload').toBeAtLeast(stored);
    expect(await storedChunks(), 'chunks stored now, at least the reserve at start').toBeAtLeast(atStart);
    expect(await page.getByTestId('storage').textContent(), 'storage line').toMatch(new RegExp(`${atStart} pull-sync chunks? since it started`));
  },

  'two tabs of one browser are two peers, and one fetches from the other': async ({ page, relay }) => {
    const room = `tabs-${Date.now()}`;
    await page.goto(`${relay.url}?room=${room}&transport=ws`);
    const file = join(tmpdir(), `syncscope-e2e-tabs-${Date.now()}.bin`);
    writeFileSync(file, Buffer.alloc(500_000).map((_, i) => (i * 131 + (i >> 9)) & 0xff));
    await page.getByTestId('file-input').setInputFiles(file);
    const shared = page.getByTestId('shared').locator('li').first();
    await shared.waitFor({ timeout: 20_000 });
    const cid = (await shared.locator('code').textContent()).trim();
    const link = await shared.locator('a').getAttribute('href');

    const second = await page.context().newPage();
    try {
      await second.goto(link);
      const done = second.getByTestId('fetch-done');
      await done.waitFor({ timeout: DONE_TIMEOUT });
      expect(await done.textContent(), 'outcome').toMatch(new RegExp(`fetched and verified ${cid}`));
      expect(await second.getByTestId('storage').textContent(), 'second tab').toMatch(/IndexedDB syncscope-node-1 \(stored node 1/);
      expect(await page.getByTestId('storage').textContent(), 'first tab').toMatch(/IndexedDB syncscope-node-0 \(this tab owns/);
      expect(link, 'the link names the file').toMatch(/[?&]name=syncscope-e2e-tabs-\d+\.bin/);
      const row = second.locator(`[data-testid="stored-row"][data-root="${cid}"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.textContent(), 'listed under the name the link gave').toMatch(/syncscope-e2e-tabs-\d+\.bin.*complete/);
      const ids = [await page.getByTestId('own-peer-id').textContent(), await second.getByTestId('own-peer-id').textContent()];
      expect(ids[0] !== ids[1], `two peer ids (${ids.join(', ')})`).toBe(true);
      await screenshot(second, 'second-tab-fetched-from-first');
    } finally {
      await second.close();
    }
  },

  'a shared file is listed as stored after a reload, downloads byte-identical, and its removal frees its chunks': async ({ page, relay }) => {
    await page.goto(`${relay.url}?room=stored-${Date.now()}&transport=ws`);
    const file = join(tmpdir(), `syncscope-e2e-stored-${Date.now()}.bin`);
    const bytes = Buffer.alloc(900_000).map((_, i) => (i * 7 + (i >> 11)) & 0xff);
    writeFileSync(file, bytes);
    await page.getByTestId('file-input').setInputFiles(file);
    const row = page.getByTestId('stored-row').first();
    await row.waitFor({ timeout: 20_000 });
    const root = await row.getAttribute('data-root');
    await page.reload();

    const listed = page.locator(`[data-testid="stored-row"][data-root="${root}"]`);
    await listed.waitFor({ timeout: 20_000 });
    expect(await listed.getAttribute('data-complete'), 'complete after the reload').toBe('true');
    expect(await listed.textContent(), 'row').toMatch(/syncscope-e2e-stored-.*\.bin.*0\.86 MiB.*complete/);
    expect(await page.getByTestId('storage-usage').textContent(), 'usage').toMatch(/MiB used of .* MiB/);
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 20_000 }),
      listed.getByTestId('stored-download').click(),
    ]);
    const saved = readFileSync(await download.path());
    expect(saved.equals(bytes), `downloaded ${saved.length} bytes equal the ${bytes.length} shared`).toBe(true);
    expect(download.suggestedFilename(), 'file name').toMatch(/^syncscope-e2e-stored-.*\.bin$/);
    await screenshot(page, 'stored-here-after-reload');

    // Each chunk taken out of the reserve leaves a note under key 3 || arrival in 'pullsync'.
    const removalNotes = () => countRecords(page, 'pullsync', 3);
    const notesBefore = await removalNotes();
    await listed.getByTestId('stored-remove').click();
    await listed.waitFor({ state: 'detached', timeout: 10_000 });
    const removed = await page.getByTestId('stored-removed').textContent();
    const [, blocks, chunks] = removed.match(/freed (\d+) blocks? and (\d+) Swarm chunks?/) ?? [];
    expect(Number(blocks), `blocks freed (${removed})`).toBeAtLeast(1);
    expect(Number(chunks), `Swarm chunks freed (${removed})`).toBeAtLeast(1);
    let notes = 0;
    for (let i = 0; i < 40 && notes < Number(chunks); i++) {
      await page.waitForTimeout(250);
      notes = (await removalNotes()) - notesBefore;
    }
    expect(notes, 'removals noted in IndexedDB, one per freed chunk').toBe(Number(chunks));
    await screenshot(page, 'stored-here-after-remove');
  },

  'a stored file downloads as a CAR, and the CAR imports into another tab as the same root': async ({ page, relay, openPage }) => {
    await page.goto(`${relay.url}?room=car-${Date.now()}&transport=ws`);
    const file = join(tmpdir(), `syncscope-e2e-car-${Date.now()}.bin`);
    writeFileSync(file, Buffer.alloc(700_000).map((_, i) => (i * 13 + (i >> 9)) & 0xff));
    await page.getByTestId('file-input').setInputFiles(file);
    const row = page.locator('[data-testid="stored-row"][data-complete="true"]').first();
    await row.waitFor({ timeout: 20_000 });
    const root = await row.getAttribute('data-root');
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 20_000 }),
      row.getByTestId('stored-car').click(),
    ]);
    expect(download.suggestedFilename(), 'file name').toBe(`${root}.car`);
    const car = join(tmpdir(), `syncscope-e2e-${root}.car`);
    await download.saveAs(car);

    const other = await openPage();
    try {
      await other.page.goto(`${relay.url}?room=car-import-${Date.now()}&transport=ws`);
      await other.page.getByTestId('status').filter({ hasText: 'connected to the relay' }).waitFor({ timeout: 30_000 });
      await other.page.getByTestId('car-input').setInputFiles(car);
      const imported = other.page.locator(`[data-testid="stored-row"][data-root="${root}"][data-complete="true"]`);
      await imported.waitFor({ timeout: 20_000 }).catch(async (e) => {
        await screenshot(other.page, 'FAILED-car-import');
        throw e;
      });
      await screenshot(other.page, 'car-imported');
      if (other.errors.length) throw new Error(`errors in the importing tab:\n  ${other.errors.join('\n  ')}`);
    } finally {
      await other.close();
    }
  },

  'a full quota ends the fetch in words, keeps it partial, and the page stays connected': async ({ page, startRelay }) => {
    const relay = await startRelay({ args: ['--seed-peers', '1', '--seed-content', '16MiB'], readyMs: 180_000 });
    try {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(relay.url).origin, quotaSize: 6 << 20 });
      await page.goto(relay.shareLink.replace(/^http:\/\/[^/]+\//, relay.url));
      const error = page.getByTestId('transfer-error');
      await error.waitFor({ timeout: DONE_TIMEOUT });
      expect(await error.textContent(), 'reason').toMatch(/storage quota is used up \(QuotaExceededError\)/);
      const cid = new URL(relay.shareLink).searchParams.get('fetch');
      const row = page.locator(`[data-testid="stored-row"][data-root="${cid}"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.getAttribute('data-complete'), 'listed as partial').toBe('false');
      expect(await page.getByTestId('status').textContent(), 'status').toMatch(/connected to the relay/);
      await screenshot(page, 'quota-exceeded');
    } finally {
      await relay.stop({ leaving: page });
    }
  },
};
