// Runs every test in tests/ against a real relay serving the built UI, in real headless Chromium.
// Each test gets a fresh browser context; a console error fails the test. Ends with
// "N passed, N failed" and a non-zero exit code on any failure.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { screenshot } from './lib/assert.mjs';
import { launchBrowser, openPage } from './lib/browser.mjs';
import { startRelay } from './lib/relay.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.env.SYNCSCOPE_RELAY_BIN;
const dist = process.env.SYNCSCOPE_DIST ?? join(here, '..', 'dist');
const filter = process.argv[2];
if (!bin) {
  console.error('error: set SYNCSCOPE_RELAY_BIN to the relay binary (cargo xtask e2e does this)');
  process.exit(2);
}

async function loadTests() {
  const tests = [];
  for (const file of readdirSync(join(here, 'tests')).filter((f) => f.endsWith('.mjs')).sort()) {
    const mod = await import(pathToFileURL(join(here, 'tests', file)));
    for (const [name, fn] of Object.entries(mod.default)) {
      if (!filter || name.includes(filter)) tests.push({ name, fn });
    }
  }
  return tests;
}

async function runOne(test, browser, relay) {
  const { page, errors, close } = await openPage(browser);
  try {
    await test.fn({
      page, relay, browser,
      openPage: () => openPage(browser),
      startRelay: (options) => startRelay({ bin, dist, ...options }),
    });
    if (errors.length) throw new Error(`errors in the page:\n  ${errors.join('\n  ')}`);
  } catch (e) {
    // What the page showed when the test failed, for whoever reads the failure.
    await screenshot(page, `FAILED-${test.name.replace(/[^a-z0-9]+/gi, '-')}`).catch(() => {});
    throw e;
  } finally {
    await close();
  }
}

const tests = await loadTests();
if (!tests.length) {
  console.error(`error: no test name contains "${filter}"`);
  process.exit(2);
}
// Only this run's screenshots and log, so a stale FAILED-* from an earlier run misleads nobody.
rmSync(join(here, '..', 'target', 'e2e'), { recursive: true, force: true });
mkdirSync(join(here, '..', 'target', 'e2e'), { recursive: true });
const relay = await startRelay({ bin, dist });
const browser = await launchBrowser();
let passed = 0;
let failed = 0;
try {
  for (const test of tests) {
    const started = Date.now();
    try {
      await runOne(test, browser, relay);
      passed += 1;
      console.log(`ok   ${test.name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed += 1;
      console.log(`FAIL ${test.name} (${Date.now() - started} ms)\n     ${String(e.stack ?? e).split('\n').join('\n     ')}`);
    }
  }
} finally {
  await browser.close();
  await relay.stop();
}
// The relay's whole log stays beside the screenshots, for reading after the run.
writeFileSync(join(here, '..', 'target', 'e2e', 'relay.log'), `${relay.log.join('\n')}\n`);
if (failed) console.log(`relay log (last 40 lines):\n${relay.log.slice(-40).join('\n')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
