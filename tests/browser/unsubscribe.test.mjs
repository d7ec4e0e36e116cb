// Browser test of the one-click unsubscribe page (/u/{token}) in headless
// Chromium (playwright-core), with JavaScript disabled: the page needs none.
//
//   node tests/browser/unsubscribe.test.mjs
//
// Starts `herald serve --public-url …` (binary from HERALD_BIN, default
// target/debug/herald; it builds nothing), creates an email channel, a
// commercial flow whose body prints `{{ unsubscribe_url }}` and a user over
// HTTP, and takes the user's link from the flow's preview (the link a send
// makes). Opens it: the confirmation names the flow, pressing "Unsubscribe"
// shows "You are unsubscribed", and the Admin API shows the flow's email off
// for that user. A tampered link shows the refusal and changes nothing. No
// request of the page leaves the server's origin.
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
// The address mail clients would reach the server at: the links carry it; the
// test opens each link's path on the server it started.
const PUBLIC = 'https://mail.herald.test';
const FLOW_NAME = 'News & <b>deals</b>';

const log = (...a) => console.log(...a);

async function call(base, keys, method, p, body) {
  const res = await fetch(base + '/admin/v1' + p, {
    method,
    headers: {
      'x-service-api-key': keys.publicKey,
      'x-service-secret-key': keys.secretKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch (_) {}
  return { status: res.status, json, desc: `${method} ${p} -> ${res.status} ${text.slice(0, 500)}` };
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

/** The user's preference of the flow's email, as the Admin API shows it. */
async function flowEmail(admin, ext, handle) {
  const p = expectStatus(await admin('GET', `/users/${ext}/preferences`), 200);
  const f = (p.flows || {})[handle];
  return f && f.channel_types ? f.channel_types.email : undefined;
}

async function unsubscribeTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = spawnHerald(dataDir, keys, '127.0.0.1:0', ['--public-url', PUBLIC]);
  let context = null;
  const pageErrors = [];
  try {
    const base = await step('herald serve prints its address', () => server.address);
    const admin = (m, p, b) => call(base, keys, m, p, b);
    const ext = `unsub-${hex(6)}`;
    const handle = `news-${hex(4)}`;
    const token = await step('an email channel, a commercial flow, a user; the link from the preview', async () => {
      const ch = expectStatus(
        await admin('POST', '/channels', {
          type: 'email',
          provider: 'postmark',
          config: { server_token: 'pm-token', from: 'Herald <noreply@herald.test>' },
        }),
        201,
      );
      const flow = expectStatus(
        await admin('POST', '/flows', {
          handle,
          name: FLOW_NAME,
          commercial: true,
          steps: [{ type: 'channel', channel_id: ch.id, template: { subject: 'News', body: 'Bye: {{ unsubscribe_url }}' } }],
        }),
        201,
      );
      expectStatus(await admin('POST', `/flows/${flow.id}/activate`), 200);
      expectStatus(await admin('PUT', `/users/${ext}`, { email: 'ada@example.com', first_name: 'Ada' }), 201);
      const p = expectStatus(await admin('POST', `/flows/${flow.id}/preview`, { user: ext }), 200);
      const body = p.steps[0].content.body;
      const m = /^Bye: (\S+)$/.exec(body);
      if (!m || !m[1].startsWith(`${PUBLIC}/u/`)) throw new Error('the preview\'s link: ' + JSON.stringify(p));
      if ((await flowEmail(admin, ext, handle)) === false) throw new Error('the flow\'s email starts off');
      return m[1].slice(`${PUBLIC}/u/`.length);
    });

    context = await step('launch headless Chromium (JavaScript off)', () =>
      chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        javaScriptEnabled: false,
        viewport: { width: 640, height: 700 },
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
          '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      }),
    );
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT);
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    const urls = [];
    page.on('request', (r) => urls.push(r.url()));

    await step('open the link: the confirmation names the flow and changes nothing', async () => {
      const res = await page.goto(`${base}/u/${token}`);
      if (res.status() !== 200) throw new Error(`status ${res.status()}`);
      const csp = res.headers()['content-security-policy'] || '';
      if (!csp.includes("default-src 'none'")) throw new Error('CSP: ' + csp);
      await page.getByRole('heading', { name: 'Unsubscribe' }).waitFor();
      // the flow's name is text, not markup
      await page.getByText(FLOW_NAME, { exact: false }).first().waitFor();
      if ((await page.locator('main b, body b').count()) !== 0) throw new Error('markup of a name was rendered');
      if ((await flowEmail(admin, ext, handle)) === false) throw new Error('opening the page turned the email off');
    });

    await step('press Unsubscribe: "You are unsubscribed"', async () => {
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Unsubscribe' }).click()]);
      await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'unsubscribed.png'), fullPage: true });
    });

    await step('the Admin API shows the flow\'s email off for the user', async () => {
      const on = await flowEmail(admin, ext, handle);
      if (on !== false) throw new Error('the flow\'s email: ' + on);
    });

    await step('a tampered link shows the refusal', async () => {
      const flipped = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
      const res = await page.goto(`${base}/u/${flipped}`);
      if (res.status() !== 404) throw new Error(`status ${res.status()}`);
      const text = await page.locator('body').innerText();
      if (text.includes(ext) || text.includes('ada@example.com')) throw new Error('the refusal names the user: ' + text);
    });

    await step('no request left the server\'s origin', async () => {
      const origin = new URL(base).origin;
      const foreign = urls.filter((u) => new URL(u).origin !== origin && !u.startsWith('data:'));
      if (foreign.length) throw new Error('requests left the origin: ' + foreign.join(', '));
    });
    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
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

const tests = [['unsubscribe: open the link, press the button, the flow\'s email is off', unsubscribeTest]];
await runTests(tests, TEST_TIMEOUT);
