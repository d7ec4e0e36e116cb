// Browser tests of herald-react: the example app (built from the package's
// dist/) in headless Chromium, in front of a real herald. The bell's count
// follows the live socket, the feed marks an entry read on click (and the
// server agrees), the keyboard opens and closes the feed, infinite scroll and
// the "Load more" fallback page through the feed, preferences persist, and
// axe-core finds no serious or critical violation. components-react18.test.mjs
// runs the same tests on the example built with React 18.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REACT_MAJOR, axe, newPage, setupWorld, waitFor } from './helpers.mjs';

const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
const T = { timeout: 60_000 };
let w;
let page;
const errors = [];

const bell = () => page.locator('.herald-bell__button');
const bellLabel = () => bell().getAttribute('aria-label');

before(async () => {
  w = await setupWorld();
  page = await newPage(w.browser, errors);
}, { timeout: 90_000 });

after(async () => {
  await w?.stop();
}, { timeout: 60_000 });

test('the bell goes live with no unread entry', T, async () => {
  const res = await page.goto(w.url());
  assert.equal(res.status(), 200);
  await page.waitForSelector('.herald-bell[data-connection="live"]');
  const react = await page.evaluate(() => document.documentElement.dataset.react);
  assert.equal(react.split('.')[0], REACT_MAJOR, `the example runs on React ${react}`);
  assert.equal(await bellLabel(), 'Notifications, none unread');
  assert.equal(await page.locator('.herald-bell__badge').count(), 0);
  assert.equal(await bell().getAttribute('aria-expanded'), 'false');
});

test('a run arriving over the live socket raises the count', T, async () => {
  await w.run({ title: 'Your weekly report is ready', n: 1 });
  await page.waitForFunction(() => document.querySelector('.herald-bell__badge')?.textContent === '1');
  assert.equal(await bellLabel(), 'Notifications, 1 unread');
  const live = await page.locator('.herald-bell [aria-live="polite"]').textContent();
  assert.equal(live, '1 unread notification');
  await w.run({ title: 'Second news', n: 2 });
  await page.waitForFunction(() => document.querySelector('.herald-bell__badge')?.textContent === '2');
});

test('the bell opens the feed: aria-expanded, focus inside, entries listed; axe finds nothing serious', T, async () => {
  await bell().click();
  assert.equal(await bell().getAttribute('aria-expanded'), 'true');
  await page.waitForSelector('.herald-bell__panel .herald-entry--unread');
  const focused = await page.evaluate(() => document.activeElement?.className);
  assert.equal(focused, 'herald-feed__title');
  const subjects = await page.locator('.herald-entry__subject').allTextContents();
  assert.deepEqual(subjects, ['Second news', 'Your weekly report is ready']);
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'bell-open.png') });
  const r = await axe(page);
  assert.ok(r.passes > 10, `axe checked only ${r.passes} rules`);
  assert.deepEqual(r.bad, []);
});

test('clicking an entry marks it read, the count falls, and the server agrees', T, async () => {
  const entry = page.locator('.herald-entry--unread', { hasText: 'Your weekly report is ready' });
  const id = await entry.getAttribute('data-id');
  const answered = page.waitForResponse((r) => r.url().endsWith(`/user/v1/feed/${id}/read`) && r.request().method() === 'POST');
  await entry.locator('.herald-entry__main').click();
  assert.equal((await answered).status(), 200);
  await page.waitForSelector(`.herald-entry--read[data-id="${id}"]`);
  await page.waitForFunction(() => document.querySelector('.herald-bell__badge')?.textContent === '1');
  assert.equal(await bellLabel(), 'Notifications, 1 unread');
  const e = await w.user('GET', `/feed/${id}`);
  assert.equal(e.read, true);
  const feed = await w.user('GET', '/feed?limit=1');
  assert.equal(feed.meta.unread_count, 1);
});

test('"Mark all as read" empties the badge, here and on the server', T, async () => {
  await page.getByRole('button', { name: 'Mark all as read' }).click();
  await page.waitForFunction(() => !document.querySelector('.herald-bell__badge'));
  assert.equal(await bellLabel(), 'Notifications, none unread');
  await waitFor('the server to count none unread', async () => (await w.user('GET', '/feed?limit=1')).meta.unread_count === 0);
  assert.equal(await page.locator('.herald-entry--unread').count(), 0);
});

test('the keyboard: Escape closes the feed and focus returns to the bell; Enter opens it', T, async () => {
  await page.keyboard.press('Escape');
  assert.equal(await bell().getAttribute('aria-expanded'), 'false');
  assert.equal(await page.locator('.herald-bell__panel').isVisible(), false);
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'herald-bell__button');
  await page.keyboard.press('Enter');
  assert.equal(await bell().getAttribute('aria-expanded'), 'true');
  await page.waitForSelector('.herald-bell__panel .herald-entry');
  // Tab moves from the heading into the list ("Mark all as read" is disabled: nothing unread)
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'herald-entry__main');
  await page.keyboard.press('Escape');
});

test('a dropped live socket reconnects and resumes: a run made meanwhile still shows', T, async () => {
  const dropped = w.example.dropWebSockets();
  assert.ok(dropped > 0, 'no proxied WebSocket to drop');
  await w.run({ title: 'While you were away', n: 3 });
  await page.waitForFunction(() => document.querySelector('.herald-bell__badge')?.textContent === '1', null, { timeout: 30_000 });
  await page.waitForSelector('.herald-bell[data-connection="live"]');
  await bell().click();
  await page.waitForSelector('.herald-entry--unread:has-text("While you were away")');
  // once, not twice: the resume does not duplicate it
  assert.equal(await page.locator('.herald-entry', { hasText: 'While you were away' }).count(), 1);
  await page.keyboard.press('Escape');
});

test('preferences: axe finds nothing serious; toggles persist across a reload and the server agrees', T, async () => {
  await page.waitForSelector('.herald-preferences [role="switch"]');
  const r = await axe(page);
  assert.ok(r.passes > 10, `axe checked only ${r.passes} rules`);
  assert.deepEqual(r.bad, []);
  const email = page.getByRole('switch', { name: 'Email', exact: true });
  const category = page.getByRole('switch', { name: 'Updates', exact: true });
  assert.equal(await email.getAttribute('aria-checked'), 'true');
  assert.equal(await category.getAttribute('aria-checked'), 'true');
  for (const sw of [email, category]) {
    const saved = page.waitForResponse((res) => res.url().endsWith('/user/v1/preferences') && res.request().method() === 'PUT');
    await sw.click();
    assert.equal((await saved).status(), 200);
    assert.equal(await sw.getAttribute('aria-checked'), 'false');
  }
  await page.screenshot({ path: path.join(ARTIFACTS, 'preferences.png'), fullPage: true });
  const p = await w.user('GET', '/preferences');
  assert.equal(p.channel_types.email, false);
  assert.equal(p.categories.updates.enabled, false);
  await page.reload();
  await page.waitForSelector('.herald-preferences [role="switch"]');
  assert.equal(await email.getAttribute('aria-checked'), 'false');
  assert.equal(await category.getAttribute('aria-checked'), 'false');
  assert.equal(await page.getByRole('switch', { name: 'SMS', exact: true }).getAttribute('aria-checked'), 'true');
  // and back on, by keyboard (Space on a focused switch)
  const saved = page.waitForResponse((res) => res.url().endsWith('/user/v1/preferences') && res.request().method() === 'PUT');
  await email.focus();
  await page.keyboard.press('Space');
  assert.equal((await saved).status(), 200);
  assert.equal(await email.getAttribute('aria-checked'), 'true');
  assert.equal((await w.user('GET', '/preferences')).channel_types.email, true);
});

test('infinite scroll loads older pages as the list scrolls', T, async () => {
  // turn the category back on so runs reach the feed again, then fill it
  await w.user('PUT', '/preferences', { categories: { updates: { enabled: true } } });
  for (let i = 0; i < 9; i++) await w.run({ title: `Bulk ${i}`, n: 10 + i });
  await waitFor('12 feed entries', async () => (await w.user('GET', '/feed?limit=50')).items.length >= 12, 30_000);
  await page.goto(w.url('&page_size=4'));
  await page.waitForSelector('.herald-bell[data-connection="live"]');
  await bell().click();
  await page.waitForSelector('.herald-feed__more');
  await waitFor('all 12 entries through scrolling', async () => {
    await page.locator('.herald-bell__panel').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    return (await page.locator('.herald-entry').count()) === 12;
  }, 30_000);
  assert.equal(await page.locator('.herald-feed__more').count(), 0);
});

test('without IntersectionObserver the "Load more" button pages the feed', T, async () => {
  const p2 = await newPage(w.browser, errors);
  try {
    await p2.addInitScript(() => {
      delete window.IntersectionObserver;
    });
    await p2.goto(w.url('&page_size=4'));
    await p2.waitForSelector('.herald-bell[data-connection="live"]');
    await p2.locator('.herald-bell__button').click();
    await p2.waitForSelector('.herald-feed__more');
    assert.equal(await p2.locator('.herald-entry').count(), 4);
    await p2.locator('.herald-bell__panel').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p2.waitForTimeout(300);
    assert.equal(await p2.locator('.herald-entry').count(), 4, 'scrolling alone loaded more without an IntersectionObserver');
    await p2.getByRole('button', { name: 'Load more' }).click();
    await p2.waitForFunction(() => document.querySelectorAll('.herald-entry').length === 8);
  } finally {
    await p2.close();
  }
});

test('count="unseen" with markSeenOnOpen: the badge counts new entries and opening the feed clears it', T, async () => {
  const p3 = await newPage(w.browser, errors);
  try {
    await p3.goto(w.url('&bell=unseen'));
    await p3.waitForSelector('.herald-bell[data-connection="live"]');
    const before = (await w.user('GET', '/feed?limit=1')).meta;
    await w.run({ title: 'Brand new', n: 99 });
    const n = before.unseen_count + 1;
    await p3.waitForFunction((k) => document.querySelector('.herald-bell__badge')?.textContent === String(k), n);
    assert.equal(await p3.locator('.herald-bell__button').getAttribute('aria-label'), `Notifications, ${n} new`);
    const answered = p3.waitForResponse((r) => r.url().endsWith('/user/v1/feed/seen_all') && r.request().method() === 'POST');
    await p3.locator('.herald-bell__button').click();
    assert.equal((await answered).status(), 200);
    await p3.waitForFunction(() => !document.querySelector('.herald-bell__badge'));
    assert.equal(await p3.locator('.herald-bell__button').getAttribute('aria-label'), 'Notifications, none new');
    const meta = (await w.user('GET', '/feed?limit=1')).meta;
    assert.equal(meta.unseen_count, 0);
    assert.equal(meta.unread_count, before.unread_count + 1, 'seen, not read');
  } finally {
    await p3.close();
  }
});

test('no page error or console error along the way', () => {
  assert.deepEqual(errors, []);
});
