// Browser test of Herald's hosted preference page (/p/{token}) in headless
// Chromium (playwright-core).
//
//   node tests/browser/preferences.test.mjs
//
// Starts `herald serve` (binary from HERALD_BIN, default target/debug/herald; it
// builds nothing), declares a category, three in_app flows (one in the category,
// one outside any, one critical) and a user over HTTP, issues a link with
// POST /admin/v1/users/{id}/preference_link and opens it: the category is turned
// off by its label, saved, the "Saved" notice shows, the Admin API shows the
// change and the next run of the category's flow is skipped. The same again in
// a context with JavaScript disabled. An expired and a tampered link show the
// refusal. No request of the page leaves the server's origin.
// Screenshots land in tests/browser/artifacts/.
// Prints `N passed, N failed` last; exit code 0 when everything passed.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { spawnHerald, stopProcess, hex } from '../../clients/js/scripts/herald-server.mjs';
import { runTests } from './console_harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const ARTIFACTS = path.join(here, 'artifacts');
const STEP_TIMEOUT = 15_000;
const TEST_TIMEOUT = 120_000;
const CATEGORY_NAME = 'Comments <b>&</b> replies';

const log = (...a) => console.log(...a);

function launch(profile, extra = {}) {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ...extra,
  });
}

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
  return { admin: (method, p, body) => call(method, '/admin/v1' + p, adminHeaders, body) };
}

function expectStatus(r, status) {
  if (r.status !== status) throw new Error(`expected ${status}: ${r.desc}`);
  return r.json;
}

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

/** The category, three active in_app flows and their handles. */
async function catalog(http) {
  expectStatus(await http.admin('PUT', '/categories/comments', { name: CATEGORY_NAME }), 201);
  const channels = expectStatus(await http.admin('GET', '/channels?limit=1000'), 200);
  const inApp = channels.items.find((c) => c.type === 'in_app');
  if (!inApp) throw new Error('no in_app channel in ' + JSON.stringify(channels));
  const flows = {};
  for (const [tag, extra] of [
    ['comment', { categories: ['comments'] }],
    ['digest', { name: 'Weekly digest' }],
    ['reset', { name: 'Password reset', critical: true }],
  ]) {
    const flow = expectStatus(
      await http.admin('POST', '/flows', {
        handle: `${tag}-${hex(4)}`,
        name: tag,
        steps: [{ type: 'channel', channel_id: inApp.id, template: { body: 'Hi' } }],
        ...extra,
      }),
      201,
    );
    expectStatus(await http.admin('POST', `/flows/${flow.id}/activate`), 200);
    flows[tag] = flow;
  }
  return flows;
}

/** Runs `flow` for `ext`; the in_app delivery's status once processed. */
async function inAppStatus(http, flow, ext) {
  const run = expectStatus(await http.admin('POST', `/flows/${flow.id}/run`, { recipients: [{ external_id: ext }] }), 202);
  for (let i = 0; i < 150; i++) {
    const r = expectStatus(await http.admin('GET', `/flow_runs/${run.id}`), 200);
    if (r.status === 'processed') break;
    await new Promise((res) => setTimeout(res, 100));
  }
  const ns = expectStatus(await http.admin('GET', `/notifications?flow_run_id=${run.id}`), 200);
  if (ns.items.length !== 1) throw new Error('one notification expected: ' + JSON.stringify(ns));
  const d = ns.items[0].deliveries.find((x) => x.channel_type === 'in_app');
  return d.status;
}

/** Every request the page makes, to check none leaves `origin`. */
function recordRequests(page) {
  const urls = [];
  page.on('request', (r) => urls.push(r.url()));
  return urls;
}

function assertSameOrigin(urls, origin) {
  const foreign = urls.filter((u) => new URL(u).origin !== origin && !u.startsWith('data:'));
  if (foreign.length) throw new Error('requests left the origin: ' + foreign.join(', '));
  if (!urls.length) throw new Error('no request recorded');
}

/**
 * Opens the link, turns the category off through its label, saves and checks
 * the notice, the Admin API and the next run. `javaScriptEnabled` for the context.
 */
async function toggleTest({ javaScriptEnabled }) {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = spawnHerald(dataDir, keys, '127.0.0.1:0');
  let context = null;
  const pageErrors = [];
  try {
    const base = await step('herald serve prints its address', () => server.address);
    const http = client(base, keys);
    const ext = `prefs-${hex(6)}`;
    const flows = await step('a category, three flows, a user', async () => {
      const f = await catalog(http);
      expectStatus(await http.admin('PUT', `/users/${ext}`, { first_name: 'Ada' }), 201);
      return f;
    });
    const link = await step('issue a preference link', async () => {
      const l = expectStatus(await http.admin('POST', `/users/${ext}/preference_link`, { expires_in: '1h' }), 200);
      if (l.url !== `${base}/p/${l.token}`) throw new Error(`the link's URL: ${JSON.stringify(l)} (server ${base})`);
      return l;
    });

    context = await step(`launch headless Chromium (JavaScript ${javaScriptEnabled ? 'on' : 'off'})`, () =>
      launch(profile, { viewport: { width: 640, height: 900 }, javaScriptEnabled }),
    );
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT);
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // the browser's own look for /favicon.ico answers 404: not the page's
      const from = m.location().url || '';
      if (m.type() === 'error' && !from.endsWith('/favicon.ico')) pageErrors.push(`console.error: ${m.text()} (${from})`);
    });
    const urls = recordRequests(page);

    await step('open the link: the page shows the category, the flows, the channels', async () => {
      const res = await page.goto(link.url);
      if (res.status() !== 200) throw new Error(`status ${res.status()}`);
      const csp = res.headers()['content-security-policy'] || '';
      if (!csp.includes("default-src 'none'")) throw new Error('CSP: ' + csp);
      if ((await page.title()) !== 'Notification preferences') throw new Error('title: ' + (await page.title()));
      // the category's name is text, not markup
      await page.getByText(CATEGORY_NAME, { exact: true }).first().waitFor();
      if ((await page.locator('main b').count()) !== 0) throw new Error('markup of a name was rendered');
      const cat = page.getByLabel(`Receive ${CATEGORY_NAME}`, { exact: true });
      if (!(await cat.isChecked())) throw new Error('the category starts on');
      if (!(await page.getByLabel('Email', { exact: true }).isChecked())) throw new Error('email starts on');
      await page.getByLabel('Weekly digest', { exact: true }).waitFor();
      const reset = page.getByLabel(/^Password reset/);
      if (!(await reset.isDisabled()) || !(await reset.isChecked())) throw new Error('the critical flow is on and not editable');
      // the page's style applied (same-origin stylesheet)
      const font = await page.evaluate(() => getComputedStyle(document.body).fontFamily).catch(() => 'system-ui');
      if (javaScriptEnabled && !font.includes('system-ui')) throw new Error('stylesheet not applied: ' + font);
    });

    await step('uncheck the category and save: the "Saved" notice', async () => {
      await page.getByLabel(`Receive ${CATEGORY_NAME}`, { exact: true }).uncheck();
      await Promise.all([page.waitForURL(/\?saved=1$/), page.getByRole('button', { name: 'Save' }).click()]);
      const notice = await page.getByRole('status').textContent();
      if (!notice.includes('Saved')) throw new Error('notice: ' + notice);
      if (await page.getByLabel(`Receive ${CATEGORY_NAME}`, { exact: true }).isChecked()) {
        throw new Error('the category shows on after the save');
      }
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, `preferences-saved-js-${javaScriptEnabled ? 'on' : 'off'}.png`), fullPage: true });
    });

    await step('the Admin API shows it, and the next run of the category\'s flow is skipped', async () => {
      const p = expectStatus(await http.admin('GET', `/users/${ext}/preferences`), 200);
      if (p.categories.comments.enabled !== false) throw new Error('preferences: ' + JSON.stringify(p));
      if (p.channel_types.email !== true) throw new Error('email changed: ' + JSON.stringify(p));
      const comment = await inAppStatus(http, flows.comment, ext);
      if (comment !== 'skipped') throw new Error(`the category's flow: ${comment}`);
      const digest = await inAppStatus(http, flows.digest, ext);
      if (digest === 'skipped') throw new Error('the flow outside the category was skipped');
      const reset = await inAppStatus(http, flows.reset, ext);
      if (reset === 'skipped') throw new Error('the critical flow was skipped');
    });

    await step('no request left the server\'s origin', async () => assertSameOrigin(urls, new URL(base).origin));
    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    if (pageErrors.length) log('  page errors:\n    ' + pageErrors.join('\n    '));
    throw e;
  } finally {
    if (context) await context.close().catch(() => {});
    const exit = await stopProcess(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

/** An expired and a tampered link show the refusal, and nothing of the user. */
async function refusedTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = spawnHerald(dataDir, keys, '127.0.0.1:0');
  let context = null;
  try {
    const base = await step('herald serve prints its address', () => server.address);
    const http = client(base, keys);
    const ext = `prefs-${hex(6)}`;
    expectStatus(await http.admin('PUT', `/users/${ext}`, { first_name: 'Ada' }), 201);
    const short = expectStatus(await http.admin('POST', `/users/${ext}/preference_link`, { expires_in: '1s' }), 200);
    const good = expectStatus(await http.admin('POST', `/users/${ext}/preference_link`, {}), 200);
    context = await launch(profile, { javaScriptEnabled: false });
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT);
    const urls = recordRequests(page);
    const refused = async (url) => {
      const res = await page.goto(url);
      if (res.status() !== 404) throw new Error(`status ${res.status()} for ${url}`);
      const body = await page.locator('body').innerText();
      if (!body.includes('preference_link') || !body.includes('not_found')) throw new Error('body: ' + body);
      if (body.includes(ext)) throw new Error('the refusal names the user: ' + body);
    };
    await step('an expired link is refused', async () => {
      await new Promise((r) => setTimeout(r, 2100));
      await refused(short.url);
    });
    await step('a tampered link is refused', async () => {
      const t = good.token;
      const flipped = t.slice(0, 10) + (t[10] === 'A' ? 'B' : 'A') + t.slice(11);
      await refused(`${base}/p/${flipped}`);
      // the untouched link still opens
      const res = await page.goto(good.url);
      if (res.status() !== 200) throw new Error(`the good link: ${res.status()}`);
    });
    await step('no request left the server\'s origin', async () => assertSameOrigin(urls, new URL(base).origin));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    throw e;
  } finally {
    if (context) await context.close().catch(() => {});
    const exit = await stopProcess(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ runner

const tests = [
  ['preferences: turn a category off and save (JavaScript on)', () => toggleTest({ javaScriptEnabled: true })],
  ['preferences: the same with JavaScript disabled', () => toggleTest({ javaScriptEnabled: false })],
  ['preferences: an expired or tampered link is refused', refusedTest],
];
await runTests(tests, TEST_TIMEOUT);
