// Browser test of Herald's /inbox page in headless Chromium (playwright-core).
//
//   node tests/browser/inbox.test.mjs
//
// Starts `herald serve` (binary from HERALD_BIN, default target/debug/herald; it
// builds nothing), creates a user and an active in_app flow over HTTP, opens
// /inbox?api_key=…&user_id=… and checks the live path end to end: the socket goes
// live, a flow run shows up as an unread entry with badge 1, a click marks it
// read and the badge drops to 0; a dropped socket resumes with since_seq and a
// `reset` reloads; infinite scroll, mark all read and archive work; a server
// killed (SIGKILL) and restarted on the same port is reconnected to without a
// reload; tabs by preference category, action buttons, archive-all and the
// user's preferences.
// Screenshots land in tests/browser/artifacts/.
// Prints `N passed, N failed` last; exit code 0 when everything passed.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
// the client's server helper: the same start (temp data dir, bootstrap keys,
// `listening on` line) and stop (SIGTERM, then SIGKILL) for both suites
import { spawnHerald, stopProcess, hex } from '../../clients/js/scripts/herald-server.mjs';
import { runTests } from './console_harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const ARTIFACTS = path.join(here, 'artifacts');
const STEP_TIMEOUT = 15_000;
const TEST_TIMEOUT = 120_000;

const log = (...a) => console.log(...a);

// ------------------------------------------------------------------ the server

const startServer = (dataDir, keys, bind = '127.0.0.1:0') => spawnHerald(dataDir, keys, bind);
const stopServer = (server) => stopProcess(server);

/** Headless Chromium on its own profile, with the flags every test needs. */
function launch(profile, extra = {}) {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ...extra,
  });
}

/**
 * The context's page, with the step timeout, and the page's errors (and, with
 * `consoleErrors`, its console errors) pushed to `errors`.
 */
async function firstPage(context, errors, consoleErrors = true) {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT);
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  if (consoleErrors) {
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console.error: ${m.text()} (${m.location().url || 'page'})`);
    });
  }
  return page;
}

/** A user `ext` and an active flow with one in_app step of `template`; the flow's id. */
async function userAndFlow(http, ext, user, tag, name, template) {
  expectStatus(await http.admin('PUT', `/users/${ext}`, user), 201);
  const channels = expectStatus(await http.admin('GET', '/channels?limit=1000'), 200);
  const inApp = channels.items.find((c) => c.type === 'in_app');
  if (!inApp) throw new Error('no in_app channel in ' + JSON.stringify(channels));
  const flow = expectStatus(
    await http.admin('POST', '/flows', {
      handle: `${tag}-${hex(4)}`,
      name,
      steps: [{ type: 'channel', channel_id: inApp.id, template }],
    }),
    201,
  );
  expectStatus(await http.admin('POST', `/flows/${flow.id}/activate`), 200);
  return flow.id;
}

// ------------------------------------------------------------------ HTTP

function client(base, keys) {
  async function call(method, p, headers, body) {
    const res = await fetch(base + p, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch (_) {}
    return { status: res.status, json, text, desc: `${method} ${p} -> ${res.status} ${text.slice(0, 500)}` };
  }
  const adminHeaders = { 'x-service-api-key': keys.publicKey, 'x-service-secret-key': keys.secretKey };
  return {
    admin: (method, p, body) => call(method, '/admin/v1' + p, adminHeaders, body),
    user: (method, p, ext, body) =>
      call(method, '/user/v1' + p, { 'x-service-api-key': keys.publicKey, 'x-service-user-id': ext }, body),
    raw: call,
  };
}

function expectStatus(r, status) {
  if (r.status !== status) throw new Error(`expected ${status}: ${r.desc}`);
  return r.json;
}

// ------------------------------------------------------------------ the test

async function step(name, fn) {
  const t = Date.now();
  try {
    const v = await fn();
    log(`  ok   ${name} (${Date.now() - t} ms)`);
    return v;
  } catch (e) {
    log(`  FAIL ${name} (${Date.now() - t} ms)`);
    throw e;
  }
}

async function inboxTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = startServer(dataDir, keys);
  let context = null;
  const pageErrors = [];
  try {
    const base = await step('herald serve prints its address', () => server.address);
    const http = client(base, keys);
    const ext = `inbox-${hex(6)}`;

    const flowId = await step('create a user and an active in_app flow', () =>
      userAndFlow(http, ext, { first_name: 'Ada', email: 'ada@example.com' }, 'inbox', 'Report ready', {
        subject: '{{ data.title }}',
        body: 'Hi {{ recipient.first_name }}, {{ data.text }}',
      }),
    );
    const run = (data) => http.admin('POST', `/flows/${flowId}/run`, { recipients: [{ external_id: ext }], data });

    await step('an older entry, already read', async () => {
      expectStatus(await run({ title: 'Welcome to Herald', text: 'your workspace is ready.' }), 202);
      for (let i = 0; i < 100; i++) {
        const feed = expectStatus(await http.user('GET', '/feed', ext), 200);
        if (feed.items.length === 1) {
          expectStatus(await http.user('POST', `/feed/${feed.items[0].id}/read`, ext), 200);
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the first entry did not reach the feed within 10 s');
    });

    context = await step('launch headless Chromium', () =>
      launch(profile, { viewport: { width: 640, height: 420 }, deviceScaleFactor: 1 }),
    );
    const page = await firstPage(context, pageErrors);

    const url = `${base}/inbox?api_key=${encodeURIComponent(keys.publicKey)}&user_id=${encodeURIComponent(ext)}`;
    await step('open /inbox and go live', async () => {
      const res = await page.goto(url);
      if (!res || res.status() !== 200) throw new Error(`GET /inbox -> ${res && res.status()}`);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent.trim() === 'live');
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry.read').length === 1);
      const badge = (await page.textContent('#badge')).trim();
      if (badge !== '0') throw new Error(`badge before the run: ${badge}`);
    });

    await step('a flow run appears live as an unread entry, badge 1', async () => {
      expectStatus(await run({ title: 'Your weekly report is ready', text: 'open it to see this week in numbers.' }), 202);
      await page.waitForSelector('#entries .entry.unread');
      await page.waitForFunction(() => document.querySelector('#badge')?.textContent.trim() === '1');
      const first = await page.$eval('#entries .entry', (li) => ({ cls: li.className, text: li.textContent }));
      if (!first.cls.includes('unread') || !first.text.includes('Your weekly report is ready')) {
        throw new Error('the new entry is not first and unread: ' + JSON.stringify(first));
      }
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-unread.png') });
    });

    await step('a click marks it read, badge 0', async () => {
      const id = await page.getAttribute('#entries .entry.unread', 'data-id');
      // The page is optimistic (the entry and badge change before the
      // answer): the server is asked only once the page's own request
      // (`POST /feed/{id}/read`) has been answered.
      const answered = page.waitForResponse((r) => r.url().endsWith(`/feed/${id}/read`));
      await page.click(`#entries .entry.unread[data-id="${id}"]`);
      await answered;
      await page.waitForSelector(`#entries .entry.read[data-id="${id}"]`);
      await page.waitForFunction(() => document.querySelector('#badge')?.textContent.trim() === '0');
      const entry = expectStatus(await http.user('GET', `/feed/${id}`, ext), 200);
      if (entry.read !== true) throw new Error('the server does not have it read: ' + JSON.stringify(entry));
      if ((await page.textContent('#status')).trim() !== 'live') throw new Error('the socket is no longer live');
      await page.mouse.move(1, 1); // no hover highlight in the picture
      await page.waitForTimeout(300); // let the background transition finish
      await page.screenshot({ path: path.join(ARTIFACTS, 'inbox.png') });
    });

    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    if (pageErrors.length) log('  page errors:\n    ' + pageErrors.join('\n    '));
    throw e;
  } finally {
    if (context) await context.close().catch(() => {});
    const exit = await stopServer(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

// A dropped socket: the page resumes with since_seq and gets exactly what it
// missed; a `reset` makes it reload the feed. The socket goes through Playwright's
// WebSocket route, so the test can drop it, hold reconnects and read the frames.
async function resumeTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = startServer(dataDir, keys);
  let context = null;
  const pageErrors = [];
  try {
    const base = await server.address;
    const http = client(base, keys);
    const ext = `resume-${hex(6)}`;
    const flow = {
      id: await userAndFlow(http, ext, { first_name: 'Bo' }, 'resume', 'Resume', { subject: 'N{{ data.n }}', body: 'entry {{ data.n }}' }),
    };
    const run = async (n) => expectStatus(await http.admin('POST', `/flows/${flow.id}/run`, { recipients: [{ external_id: ext }], data: { n } }), 202);
    const feedIds = async () => expectStatus(await http.user('GET', '/feed?limit=100', ext), 200).items.map((e) => e.id);
    const waitFeed = async (n) => {
      for (let i = 0; i < 100; i++) {
        const ids = await feedIds();
        if (ids.length >= n) return ids;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the feed did not reach ${n} entries`);
    };

    context = await launch(profile);
    const page = await firstPage(context, pageErrors, false);

    // every live socket goes through this route
    const auths = []; // the auth frames the page sent
    const received = []; // the types of the server's frames
    let blocked = false;
    let rewriteSince = null;
    let current = null;
    await page.routeWebSocket(/\/user\/v1\/feed\/live/, (ws) => {
      if (blocked) return void ws.close({ code: 1013, reason: 'test: held back' });
      const upstream = ws.connectToServer();
      const conn = { ws, upstream, open: true };
      current = conn;
      upstream.onMessage((m) => {
        if (!conn.open) return;
        try {
          received.push(JSON.parse(String(m)).type);
        } catch (_) {}
        ws.send(m);
      });
      ws.onMessage((m) => {
        let v = null;
        try {
          v = JSON.parse(String(m));
        } catch (_) {}
        if (v && v.type === 'auth') {
          auths.push(v);
          if (rewriteSince !== null) {
            v.since_seq = rewriteSince;
            m = JSON.stringify(v);
          }
        }
        upstream.send(m);
      });
    });
    const drop = (conn) => {
      conn.open = false;
      conn.ws.close({ code: 1013, reason: 'test: drop' });
      conn.upstream.close({ code: 1000, reason: 'test: drop' });
    };
    const texts = () => page.$$eval('#entries .entry', (els) => els.map((e) => `${e.querySelector('.subject')?.textContent}:${e.classList.contains('read') ? 'read' : 'unread'}`));
    const waitState = (want) => page.waitForFunction((w) => document.querySelector('#status')?.textContent === w, want);
    const waitList = async (want, badge) => {
      const deadline = Date.now() + STEP_TIMEOUT;
      for (;;) {
        const got = await texts();
        const b = (await page.textContent('#badge')).trim();
        if (JSON.stringify(got) === JSON.stringify(want) && b === String(badge)) return;
        if (Date.now() > deadline) throw new Error(`list ${JSON.stringify(got)} badge ${b}; want ${JSON.stringify(want)} badge ${badge}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    await step('open /inbox, go live, one live entry', async () => {
      await page.goto(`${base}/inbox?api_key=${encodeURIComponent(keys.publicKey)}&user_id=${encodeURIComponent(ext)}`);
      await waitState('live');
      await run(1);
      await waitList(['N1:unread'], 1);
      if (auths.length !== 1 || 'since_seq' in auths[0]) throw new Error('first auth frame: ' + JSON.stringify(auths));
    });

    await step('socket dropped: the page goes offline and retries', async () => {
      blocked = true;
      drop(current);
      await waitState('offline');
    });

    await step('missed while offline: two runs and a read', async () => {
      await run(2);
      await run(3);
      const ids = await waitFeed(3);
      expectStatus(await http.user('POST', `/feed/${ids[2]}/read`, ext), 200);
    });

    await step('reconnect resumes with since_seq and shows exactly the missed events', async () => {
      const before = auths.length;
      const from = received.length;
      blocked = false;
      await waitState('live');
      const a = auths[auths.length - 1];
      if (auths.length <= before || a.since_seq !== 1 || a.user_id !== ext) throw new Error('resume auth frame: ' + JSON.stringify(auths));
      await waitList(['N3:unread', 'N2:unread', 'N1:read'], 2);
      const replay = received.slice(from).join();
      if (replay !== 'hello,feed_entry.created,feed_entry.created,feed_entry.updated') throw new Error('frames after the reconnect: ' + replay);
    });

    await step('a reset makes the page reload the feed and go on', async () => {
      // while the socket is down: a new entry, and everything read
      blocked = true;
      drop(current);
      await waitState('offline');
      await run(4);
      await waitFeed(4);
      expectStatus(await http.user('POST', '/feed/read_all', ext), 200);
      rewriteSince = 1_000_000; // above the latest seq: the server answers reset
      blocked = false;
      await waitState('live');
      await waitList(['N4:read', 'N3:read', 'N2:read', 'N1:read'], 0);
      if (received.slice(-2).join() !== 'hello,reset') throw new Error('expected hello then reset: ' + received.join());
      rewriteSince = null;
      await run(5);
      await waitList(['N5:unread', 'N4:read', 'N3:read', 'N2:read', 'N1:read'], 1);
    });

    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    throw e;
  } finally {
    if (context) await context.close().catch(() => {});
    const exit = await stopServer(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

// The page on a longer feed and across a server that dies: infinite scroll
// loads the older page, "Mark all read" and an entry's archive button act, and
// after `kill -9` and a restart on the same port the page reconnects by itself
// (no reload) and shows the next entry live.
async function restartTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  let server = startServer(dataDir, keys);
  let context = null;
  const pageErrors = [];
  try {
    const base = await server.address;
    const http = client(base, keys);
    const ext = `restart-${hex(6)}`;
    const flow = {
      id: await userAndFlow(http, ext, { first_name: 'Cy' }, 'restart', 'Restart', { subject: 'N{{ data.n }}', body: 'entry {{ data.n }}' }),
    };
    const run = async (n) => expectStatus(await http.admin('POST', `/flows/${flow.id}/run`, { recipients: [{ external_id: ext }], data: { n } }), 202);
    for (let n = 1; n <= 30; n++) await run(n);
    for (let i = 0; ; i++) {
      const feed = expectStatus(await http.user('GET', '/feed?limit=100', ext), 200);
      if (feed.items.length === 30) break;
      if (i > 100) throw new Error('30 entries did not reach the feed');
      await new Promise((r) => setTimeout(r, 100));
    }

    context = await launch(profile, { viewport: { width: 640, height: 420 }, deviceScaleFactor: 1 });
    const page = await firstPage(context, pageErrors, false);
    const count = (sel) => page.$$eval(sel, (els) => els.length);
    const badge = async () => (await page.textContent('#badge')).trim();
    const waitBadge = (n) => page.waitForFunction((w) => document.querySelector('#badge')?.textContent.trim() === w, String(n));
    const waitState = (want) => page.waitForFunction((w) => document.querySelector('#status')?.dataset.state === w, want, { timeout: 30_000 });

    await step('open /inbox: the first page of 25, badge 30', async () => {
      await page.goto(`${base}/inbox?api_key=${encodeURIComponent(keys.publicKey)}&user_id=${encodeURIComponent(ext)}`);
      await waitState('live');
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry').length >= 25);
      await waitBadge(30);
      await page.waitForTimeout(300); // nothing more may load before a scroll
      if ((await count('#entries .entry')) !== 25) throw new Error('entries before scrolling: ' + (await count('#entries .entry')));
      if (!(await page.isVisible('#more'))) throw new Error('#more is not shown');
    });

    await step('infinite scroll: scrolling to the end loads the other 5', async () => {
      await page.evaluate(() => document.querySelector('#entries .entry:last-child').scrollIntoView());
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry').length === 30);
      await page.waitForSelector('#more', { state: 'hidden' });
      const last = await page.textContent('#entries .entry:last-child .subject');
      if (last !== 'N1') throw new Error('the last entry is ' + last);
    });

    await step('"Mark all read": every entry read, badge 0, on the server too', async () => {
      await page.evaluate(() => window.scrollTo(0, 0));
      // The page is optimistic (badge and entries change before the answer):
      // the server is asked only once the page's own request has been answered.
      const answered = page.waitForResponse((r) => r.url().endsWith('/feed/read_all'));
      await page.click('#read-all');
      await answered;
      await waitBadge(0);
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry.unread').length === 0);
      const unread = expectStatus(await http.user('GET', '/feed?status=unread', ext), 200);
      if (unread.items.length !== 0) throw new Error('unread on the server: ' + unread.items.length);
      if (!(await page.isDisabled('#read-all'))) throw new Error('the button should be disabled at 0');
    });

    await step("an entry's archive button removes it, on the server too", async () => {
      const id = await page.getAttribute('#entries .entry:first-child', 'data-id');
      await page.hover('#entries .entry:first-child');
      const answered = page.waitForResponse((r) => r.url().endsWith(`/feed/${id}/archive`));
      await page.click('#entries .entry:first-child .archive');
      await answered;
      await page.waitForFunction((i) => !document.querySelector(`#entries .entry[data-id="${i}"]`), id);
      if ((await count('#entries .entry')) !== 29) throw new Error('entries after archive: ' + (await count('#entries .entry')));
      const e = expectStatus(await http.user('GET', `/feed/${id}`, ext), 200);
      if (e.archived !== true) throw new Error('not archived on the server');
    });

    await step('kill -9 the server: the page shows it is offline and retrying', async () => {
      await page.evaluate(() => (window.__noReload = true));
      await new Promise((r) => setTimeout(r, 1200)); // let the store flush what it was told
      server.child.kill('SIGKILL');
      await server.exited;
      await waitState('offline');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-offline.png') });
    });

    await step('restart on the same port: the page reconnects without a reload', async () => {
      const port = new URL(base).port;
      server = startServer(dataDir, keys, `127.0.0.1:${port}`);
      const again = await server.address;
      if (again !== base) throw new Error(`restarted on ${again}, not ${base}`);
      await waitState('live');
      if ((await page.evaluate(() => window.__noReload)) !== true) throw new Error('the page was reloaded');
    });

    await step('a run after the restart arrives live, badge 1; a click reads it, badge 0', async () => {
      await run(31);
      await page.waitForFunction(() => document.querySelector('#entries .entry:first-child .subject')?.textContent === 'N31');
      await waitBadge(1);
      await page.click('#entries .entry.unread');
      await waitBadge(0);
      if ((await badge()) !== '0') throw new Error('badge');
      await page.mouse.move(1, 1);
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-after-restart.png') });
    });

    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    if (pageErrors.length) log('  page errors:\n    ' + pageErrors.join('\n    '));
    throw e;
  } finally {
    if (context) await context.close().catch(() => {});
    const exit = await stopServer(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

// A batch (digest) step: three runs within its window become one live entry
// whose body lists every activity, one per line, and the badge counts one.
async function digestTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = startServer(dataDir, keys);
  let context = null;
  const pageErrors = [];
  try {
    const base = await step('herald serve prints its address', () => server.address);
    const http = client(base, keys);
    const ext = `digest-${hex(6)}`;
    const flowId = await step('a user and a flow: batch (2 s) then in_app', async () => {
      expectStatus(await http.admin('PUT', `/users/${ext}`, { first_name: 'Ada' }), 201);
      const channels = expectStatus(await http.admin('GET', '/channels?limit=1000'), 200);
      const inApp = channels.items.find((c) => c.type === 'in_app');
      const flow = expectStatus(
        await http.admin('POST', '/flows', {
          handle: `digest-${hex(4)}`,
          name: 'Comments digest',
          steps: [
            { type: 'batch', window: '2s' },
            {
              type: 'channel',
              channel_id: inApp.id,
              template: {
                subject: '{{ batch.count }} new comments',
                body: '{% for a in batch.activities %}{{ a.data.text }}{% if not loop.last %}\n{% endif %}{% endfor %}',
              },
            },
          ],
        }),
        201,
      );
      expectStatus(await http.admin('POST', `/flows/${flow.id}/activate`), 200);
      return flow.id;
    });

    context = await step('launch headless Chromium', () =>
      launch(profile, { viewport: { width: 640, height: 420 }, deviceScaleFactor: 1 }),
    );
    const page = await firstPage(context, pageErrors);
    const url = `${base}/inbox?api_key=${encodeURIComponent(keys.publicKey)}&user_id=${encodeURIComponent(ext)}`;
    await step('open /inbox and go live, empty', async () => {
      const res = await page.goto(url);
      if (!res || res.status() !== 200) throw new Error(`GET /inbox -> ${res && res.status()}`);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent.trim() === 'live');
      await page.waitForFunction(() => !document.querySelector('#empty')?.hidden);
    });

    const texts = ['Grace: looks good', 'Alan: one question', 'Edsger: ship it'];
    await step('three runs within the window: nothing yet, then one digest entry', async () => {
      for (const text of texts) {
        expectStatus(
          await http.admin('POST', `/flows/${flowId}/run`, { recipients: [{ external_id: ext }], data: { text } }),
          202,
        );
      }
      if ((await page.$$('#entries .entry')).length !== 0) throw new Error('an entry before the batch closed');
      await page.waitForSelector('#entries .entry.unread', { timeout: 20_000 });
      await page.waitForFunction(() => document.querySelector('#badge')?.textContent.trim() === '1');
      await page.waitForTimeout(500); // nothing else arrives
      const entries = await page.$$eval('#entries .entry', (lis) =>
        lis.map((li) => ({
          subject: li.querySelector('.subject')?.textContent,
          lines: li.querySelector('.body')?.innerText.split('\n'),
        })),
      );
      const want = [{ subject: '3 new comments', lines: texts }];
      if (JSON.stringify(entries) !== JSON.stringify(want)) {
        throw new Error(`the digest entry: ${JSON.stringify(entries)}, want ${JSON.stringify(want)}`);
      }
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-digest.png') });
    });
    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    if (pageErrors.length) log('  page errors:\n    ' + pageErrors.join('\n    '));
    throw e;
  } finally {
    if (context) await context.close().catch(() => {});
    const exit = await stopServer(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

// Tabs by preference category, action buttons and archive-all: a tab shows
// only its category's flows (live entries of other categories stay out), a
// press of an action button records it on the server (the entry is read and
// the button shown pressed) and opens its URL, and "Archive all" on a tab
// archives that category's entries only.
async function tabsTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = startServer(dataDir, keys);
  let context = null;
  const pageErrors = [];
  try {
    const base = await step('herald serve prints its address', () => server.address);
    const http = client(base, keys);
    const ext = `tabs-${hex(6)}`;
    const flows = await step('two categories, a flow in each (billing with an action button)', async () => {
      expectStatus(await http.admin('PUT', `/users/${ext}`, { first_name: 'Ada' }), 201);
      expectStatus(await http.admin('PUT', '/categories/billing', { name: 'Billing' }), 201);
      expectStatus(await http.admin('PUT', '/categories/comments', { name: 'Comments' }), 201);
      const channels = expectStatus(await http.admin('GET', '/channels?limit=1000'), 200);
      const inApp = channels.items.find((c) => c.type === 'in_app');
      const make = async (cat, template) => {
        const f = expectStatus(
          await http.admin('POST', '/flows', {
            handle: `${cat}-${hex(4)}`, name: cat, categories: [cat],
            steps: [{ type: 'channel', channel_id: inApp.id, template }],
          }),
          201,
        );
        expectStatus(await http.admin('POST', `/flows/${f.id}/activate`), 200);
        return f.id;
      };
      return {
        billing: await make('billing', {
          subject: 'Invoice {{ data.n }}', body: 'Due soon',
          actions: [{ label: 'Pay', url: `${base}/healthz?invoice={{ data.n }}` }],
        }),
        comments: await make('comments', { subject: 'Comment {{ data.n }}', body: 'Hi' }),
      };
    });
    const run = (flow, n) =>
      http.admin('POST', `/flows/${flow}/run`, { recipients: [{ external_id: ext }], data: { n } });
    expectStatus(await run(flows.billing, 1), 202);
    expectStatus(await run(flows.comments, 1), 202);

    context = await step('launch headless Chromium', () =>
      launch(profile, { viewport: { width: 640, height: 480 }, deviceScaleFactor: 1 }),
    );
    const page = await firstPage(context, pageErrors);
    const subjects = () => page.$$eval('#entries .entry .subject', (ps) => ps.map((p) => p.textContent));
    const url = `${base}/inbox?api_key=${encodeURIComponent(keys.publicKey)}&user_id=${encodeURIComponent(ext)}`;
    // the tabs' unread badges as {category: text} ('' for All; '' text when hidden)
    const badges = () =>
      page.$$eval('#tabs .tab', (bs) =>
        JSON.stringify(Object.fromEntries(bs.map((b) => {
          const c = b.querySelector('.tab-count');
          return [b.dataset.category, c && !c.hidden ? c.textContent : ''];
        }))),
      );
    const tabBadges = async (want) => {
      await page
        .waitForFunction(
          (w) => JSON.stringify(Object.fromEntries([...document.querySelectorAll('#tabs .tab')].map((b) => {
            const c = b.querySelector('.tab-count');
            return [b.dataset.category, c && !c.hidden ? c.textContent : ''];
          }))) === w,
          want,
          { timeout: 5000 },
        )
        .catch(async () => {
          throw new Error(`tab badges: want ${want}, got ${await badges()}`);
        });
    };
    await step('open /inbox: tabs All, Billing, Comments; both entries under All', async () => {
      await page.goto(url);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent.trim() === 'live');
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry').length === 2);
      await page.waitForSelector('#tabs:not([hidden]) .tab');
      const tabs = await page.$$eval('#tabs .tab .tab-name', (bs) => bs.map((b) => b.textContent));
      if (JSON.stringify(tabs) !== '["All","Billing","Comments"]') throw new Error('tabs: ' + JSON.stringify(tabs));
      await tabBadges('{"":"2","billing":"1","comments":"1"}');
    });
    await step('the Billing tab shows only billing, and live entries of its category only', async () => {
      await page.click('#tabs .tab[data-category="billing"]');
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry').length === 1);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent.trim() === 'live');
      expectStatus(await run(flows.comments, 2), 202);
      expectStatus(await run(flows.billing, 2), 202);
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry').length === 2);
      await page.waitForTimeout(500);
      const got = await subjects();
      if (JSON.stringify(got) !== '["Invoice 2","Invoice 1"]') throw new Error('billing tab: ' + JSON.stringify(got));
      // every tab's badge follows live (the All badge is this store's total)
      await tabBadges('{"":"4","billing":"2","comments":"2"}');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-tabs.png') });
    });
    await step('pressing Pay records the action, reads the entry and opens its URL', async () => {
      const id = await page.getAttribute('#entries .entry:first-child', 'data-id');
      const popup = context.waitForEvent('page');
      const answered = page.waitForResponse((r) => r.url().endsWith(`/feed/${id}/interact`));
      await page.click('#entries .entry:first-child .action');
      if ((await answered).status() !== 200) throw new Error('interact was not answered 200');
      const opened = await popup;
      await opened.waitForLoadState();
      if (!opened.url().startsWith(`${base}/healthz?invoice=2`)) throw new Error('opened ' + opened.url());
      await opened.close();
      await page.waitForSelector(`#entries .entry.read[data-id="${id}"] .action.pressed`);
      const entry = expectStatus(await http.user('GET', `/feed/${id}`, ext), 200);
      if (entry.interacted_action !== 0 || !entry.read) throw new Error('server: ' + JSON.stringify(entry));
      await tabBadges('{"":"3","billing":"1","comments":"2"}');
    });
    await step('Archive all on the Billing tab archives billing only', async () => {
      await page.click('#archive-all');
      await page.waitForFunction(() => document.querySelectorAll('#entries .entry').length === 0);
      await tabBadges('{"":"2","billing":"","comments":"2"}');
      await page.click('#tabs .tab[data-category=""]');
      // the All store shows what it held until its reload answers
      const want = '["Comment 2","Comment 1"]';
      await page
        .waitForFunction(
          (w) => JSON.stringify([...document.querySelectorAll('#entries .entry .subject')].map((p) => p.textContent)) === w,
          want,
        )
        .catch(async () => {
          throw new Error('All after archive: ' + JSON.stringify(await subjects()));
        });
      const archived = expectStatus(await http.user('GET', '/feed?status=archived', ext), 200);
      if (archived.items.length !== 2) throw new Error('archived: ' + JSON.stringify(archived));
    });
    await step('Preferences: turn Billing off and save; the next billing run is skipped', async () => {
      await page.click('#prefs-toggle');
      await page.waitForSelector('#prefs:not([hidden]) input[name="category.billing"]');
      if (!(await page.isChecked('input[name="category.billing"]'))) throw new Error('billing starts on');
      await page.uncheck('input[name="category.billing"]');
      const saved = page.waitForResponse((r) => r.url().endsWith('/user/v1/preferences') && r.request().method() === 'PUT');
      await page.click('#prefs button[type="submit"]');
      if ((await saved).status() !== 200) throw new Error('PUT /preferences was not 200');
      await page.waitForFunction(() => document.querySelector('#prefs-status')?.textContent === 'Saved');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-preferences.png') });
      const p = expectStatus(await http.admin('GET', `/users/${ext}/preferences`), 200);
      if (p.categories.billing.enabled !== false || p.categories.comments.enabled !== true) {
        throw new Error('stored: ' + JSON.stringify(p.categories));
      }
      const r = expectStatus(await run(flows.billing, 3), 202);
      const ns = expectStatus(await http.admin('GET', `/notifications?flow_run_id=${r.id}`), 200);
      const status = ns.items[0]?.deliveries?.[0]?.status;
      if (status !== 'skipped') throw new Error('billing run after save: ' + JSON.stringify(ns));
      const feed = expectStatus(await http.user('GET', '/feed?category=billing&status=all', ext), 200);
      if (feed.items.length !== 0) throw new Error('a billing entry arrived: ' + JSON.stringify(feed.items));
    });
    await step('Preferences: quiet hours on, 21:30 to 06:15, saved; then off', async () => {
      await page.check('input[name="qh"]');
      await page.fill('input[name="qh.from"]', '21:30');
      await page.fill('input[name="qh.to"]', '06:15');
      const save = async () => {
        const saved = page.waitForResponse((r) => r.url().endsWith('/user/v1/preferences') && r.request().method() === 'PUT');
        await page.click('#prefs button[type="submit"]');
        if ((await saved).status() !== 200) throw new Error('PUT /preferences was not 200');
        await page.waitForFunction(() => document.querySelector('#prefs-status')?.textContent === 'Saved');
      };
      await save();
      let p = expectStatus(await http.admin('GET', `/users/${ext}/preferences`), 200);
      if (p.quiet_hours?.from !== '21:30' || p.quiet_hours?.to !== '06:15') throw new Error('stored: ' + JSON.stringify(p.quiet_hours));
      if (p.categories.billing.enabled !== false) throw new Error('billing came back on');
      await page.uncheck('input[name="qh"]');
      await save();
      p = expectStatus(await http.admin('GET', `/users/${ext}/preferences`), 200);
      if (p.quiet_hours !== null) throw new Error('not cleared: ' + JSON.stringify(p.quiet_hours));
    });
    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    if (pageErrors.length) log('  page errors:\n    ' + pageErrors.join('\n    '));
    throw e;
  } finally {
    if (context) await context.close().catch(() => {});
    const exit = await stopServer(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ runner

const tests = [
  ['inbox: live entry, click to read', inboxTest],
  ['inbox: resume after a dropped socket, reset', resumeTest],
  ['inbox: infinite scroll, mark all read, archive, reconnect after kill -9 and restart', restartTest],
  ['inbox: a batch step\'s digest is one live entry listing its activities', digestTest],
  ['inbox: tabs by category, action buttons, archive all', tabsTest],
];
await runTests(tests, TEST_TIMEOUT);
