// The few assertions the suite needs, with messages that say what was expected.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SCREENSHOT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'target', 'e2e');

export function expect(actual, what = 'value') {
  const fail = (msg) => { throw new Error(`${what}: ${msg}`); };
  return {
    toBe(expected) { if (actual !== expected) fail(`expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`); },
    toMatch(re) { if (!re.test(String(actual))) fail(`expected to match ${re}, got ${JSON.stringify(actual)}`); },
    toBeAtLeast(n) { if (!(actual >= n)) fail(`expected at least ${n}, got ${actual}`); },
    toBeAtMost(n) { if (!(actual <= n)) fail(`expected at most ${n}, got ${actual}`); },
  };
}

export async function screenshot(page, name) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}
