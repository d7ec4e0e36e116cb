// What the console's browser tests share: the step and test runner, the
// headless Chromium they drive, `herald console add-member` on a served data
// directory, and the checks and clean-up every walk ends with.

import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { stopProcess } from '../../clients/js/scripts/herald-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.HERALD_BIN || path.join(here, '../../target/debug/herald');
export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
export const ARTIFACTS = path.join(here, 'artifacts');
export const STEP_TIMEOUT = 15_000;

export const log = (...a) => console.log(...a);

/** Runs one named step, logging `ok` or `FAIL` with its time. */
export async function step(name, fn) {
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

/** Headless Chromium on a profile of its own, nothing fetched in the background. */
export function launch(profile, extra = {}) {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ...extra,
  });
}

/** `herald console add-member …` on the served data directory: the one-time link. */
export function addMember(dataDir, email, role) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HERALD_')) env[k] = v;
  const out = execFileSync(
    BIN,
    ['console', 'add-member', email, '--project', 'default', '--role', role, '--data-dir', dataDir],
    { env: { ...env, NO_COLOR: '1', RUST_LOG: 'warn' }, encoding: 'utf8' },
  );
  const m = /^sign_in_link: (\S+)$/m.exec(out);
  if (!m) throw new Error('no sign_in_link line: ' + out);
  return m[1];
}

/** Throws when a request of the pages left the server's origin. */
export function assertSameOrigin(urls, base) {
  const origin = new URL(base).origin;
  const foreign = urls.filter((u) => new URL(u).origin !== origin && !u.startsWith('data:'));
  if (foreign.length) throw new Error('requests left the origin: ' + foreign.join(', '));
}

/** Closes the browser, stops the server and removes the walk's directories. */
export async function finish(context, server, dirs) {
  if (context) await context.close().catch(() => {});
  const exit = await stopProcess(server);
  log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/**
 * Runs `[name, fn]` tests one after another, each within `timeoutMs`;
 * prints `N passed, N failed` last and exits 0 when everything passed.
 */
export async function runTests(tests, timeoutMs) {
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of tests) {
    log(`test ${name}`);
    let timer;
    try {
      await Promise.race([
        fn(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000} s`)), timeoutMs);
        }),
      ]);
      passed += 1;
      log(`PASS ${name}`);
    } catch (e) {
      failed += 1;
      log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    } finally {
      clearTimeout(timer);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
