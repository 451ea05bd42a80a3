// Two browser tabs that open the same share link find each other through the relay's room, and
// a tab that closes disappears from the other's member list.
import { expect, screenshot } from '../lib/assert.mjs';

async function memberIds(page) {
  return page.getByTestId('member').evaluateAll((els) => els.map((e) => e.dataset.peer));
}

async function memberKinds(page) {
  return page.getByTestId('member').evaluateAll((els) => els.map((e) => e.dataset.kind));
}

async function ownId(page) {
  await page.getByTestId('own-peer-id').filter({ hasText: /^12D3KooW/ }).waitFor({ timeout: 30_000 });
  return page.getByTestId('own-peer-id').textContent();
}

/// A second tab opens the first's share link on `transport`, is listed, closes, and must leave the
/// first tab's list within `leaveMs`.
async function joinAndLeave({ page, relay, openPage }, transport, leaveMs) {
  const room = `e2e-${Date.now()}`;
  await page.goto(`${relay.url}?room=${room}&transport=ws`);
  await page.getByTestId('room').filter({ hasText: room }).waitFor({ timeout: 15_000 });
  const link = await page.getByTestId('share-link').getAttribute('href');
  expect(link, 'share link').toMatch(new RegExp(`[?&]room=${room}`));
  const url = new URL(link);
  url.searchParams.set('transport', transport);

  const other = await openPage();
  try {
    await other.page.goto(url.href);
    const [a, b] = [await ownId(page), await ownId(other.page)];
    await page.getByTestId('member-count').filter({ hasText: '1 other peer' }).waitFor({ timeout: 15_000 });
    await other.page.getByTestId('member-count').filter({ hasText: '1 other peer' }).waitFor({ timeout: 15_000 });
    expect((await memberIds(page)).join(), 'first tab lists the second').toBe(b);
    expect((await memberIds(other.page)).join(), 'second tab lists the first').toBe(a);
    // The kind comes from the agent the relay learns by identify, which may land after the
    // member itself: wait for it, then check nothing else is listed.
    await page.locator('[data-testid="member"][data-kind="browser"]').waitFor({ timeout: 10_000 });
    expect((await memberKinds(page)).join(), 'the other tab is listed as a browser').toBe('browser');
    await screenshot(page, `room-two-tabs-${transport}`);
    if (other.errors.length) throw new Error(`errors in the second tab:\n  ${other.errors.join('\n  ')}`);
  } finally {
    await other.close();
  }
  const closed = Date.now();
  await page.getByTestId('member-count').filter({ hasText: 'no one else is here yet' }).waitFor({ timeout: leaveMs });
  console.log(`    the closed ${transport} tab left the list after ${Date.now() - closed} ms`);
}

export default {
  'two tabs in the same room see each other and a closed tab leaves': (ctx) => joinAndLeave(ctx, 'ws', 10_000),
  // A tab closes its peer connections as it goes (vendor/libp2p-webrtc-websys), which aborts SCTP,
  // and the relay ends the connection on that (vendor/libp2p-webrtc, webrtc-sctp). Either side
  // missing, the relay learns only when ICE fails, after 10 s of silence.
  'a tab on WebRTC-direct that closes leaves the room within 5 s': (ctx) => joinAndLeave(ctx, 'webrtc-direct', 5_000),
};
