// Helpers of herald-react's browser tests: a real herald (herald-client's
// starter: temp data dir, random keys, 127.0.0.1), the example app served by
// example/server.mjs in front of it, headless Chromium (Debian's, through
// playwright-core), axe-core injected from node_modules, the User API as the
// server sees it, and polling with a deadline so nothing can hang.

import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startHerald, hex, sleep } from '../../js/scripts/herald-server.mjs';
import { startExampleServer } from '../example/server.mjs';

export { hex, sleep };
const require = createRequire(import.meta.url);
export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
export const STEP_TIMEOUT = 15_000;
/** The example build the tests load: example/dist (React 19), or as HERALD_REACT_EXAMPLE says (dist-react18). */
export const EXAMPLE_DIST = fileURLToPath(new URL(`../example/${process.env.HERALD_REACT_EXAMPLE || 'dist'}/`, import.meta.url));
/** The React major version that build must run on. */
export const REACT_MAJOR = process.env.HERALD_REACT_EXAMPLE === 'dist-react18' ? '18' : '19';

/** Polls `fn` until it returns a truthy value; throws with `what` after `ms`. */
export async function waitFor(what, fn, ms = STEP_TIMEOUT) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(50);
  }
}

/**
 * Everything a test needs: herald with a user, a declared category and an
 * in_app flow in it; the example server; Chromium. `stop()` tears it all down.
 */
export async function setupWorld() {
  const herald = await startHerald();
  const cleanup = [() => herald.stop()];
  try {
    const ext = `react-${hex(6)}`;
    await herald.admin.user(ext, { first_name: 'Ada', email: 'ada@example.com' });
    const flow = await herald.admin.categoryFlow('updates');
    const run = (data) => herald.admin.run(flow.id, ext, data);
    const example = await startExampleServer({ herald: herald.base, dir: EXAMPLE_DIST });
    cleanup.push(() => example.close());
    const profile = mkdtempSync(path.join(tmpdir(), 'herald-react-profile-'));
    cleanup.push(() => rmSync(profile, { recursive: true, force: true }));
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 900, height: 700 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    cleanup.push(() => browser.close());
    /** The User API as this user, straight to herald (not through the page). */
    async function user(method, p, body) {
      const res = await fetch(herald.base + '/user/v1' + p, {
        method,
        headers: {
          'x-service-api-key': herald.keys.publicKey,
          'x-service-user-id': ext,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await res.json().catch(() => null);
      if (res.status >= 300) throw new Error(`${method} ${p} -> ${res.status} ${JSON.stringify(json)}`);
      return json;
    }
    const url = (extra = '') =>
      `${example.url}/?api_key=${encodeURIComponent(herald.keys.publicKey)}&user_id=${encodeURIComponent(ext)}${extra}`;
    return {
      herald, example, browser, ext, flow, run, user, url,
      async stop() {
        for (const f of cleanup.reverse()) await Promise.resolve().then(f).catch(() => {});
      },
    };
  } catch (e) {
    for (const f of cleanup.reverse()) await Promise.resolve().then(f).catch(() => {});
    throw e;
  }
}

/** A new page with the step timeout; page errors and console errors collected in `errors`. */
export async function newPage(browser, errors) {
  const page = await browser.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT);
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
  });
  return page;
}

/**
 * Runs axe-core (from node_modules, never a CDN) on the page as it is; returns
 * the serious and critical violations, and how many rules passed (so a run that
 * checked nothing is noticed).
 */
export async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) {
    await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  }
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return {
      passes: r.passes.length,
      bad: r.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    };
  });
}
