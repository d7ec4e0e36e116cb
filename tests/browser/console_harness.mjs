// What the console's browser tests share: the step and test runner, the
// headless Chromium they drive, `herald console add-member` on a served data
// directory, a three-node cluster to walk (PostgreSQL and a nats-server of
// its own), and the checks and clean-up every walk ends with.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { hex, sleep, spawnHerald, stopProcess } from '../../clients/js/scripts/herald-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.HERALD_BIN || path.join(here, '../../target/debug/herald');
export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
export const ARTIFACTS = path.join(here, 'artifacts');
export const STEP_TIMEOUT = 15_000;

export const log = (...a) => console.log(...a);

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core in the page (evaluated through the debugger, which the page's CSP does not govern). */
export async function axe(page, label) {
  await page.evaluate(`${AXE};0`);
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    const words = bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
    throw new Error(`axe on ${label}:\n  ${words.join('\n  ')}`);
  }
}


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

/**
 * `herald console add-member …` on the served data directory (or, with
 * `store`, on a PostgreSQL database, the link starting with `publicUrl`):
 * the one-time link.
 */
export function addMember(dataDir, email, role, { store, publicUrl } = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HERALD_')) env[k] = v;
  const where = store ? ['--store', store, '--public-url', publicUrl] : ['--data-dir', dataDir];
  const out = execFileSync(
    BIN,
    ['console', 'add-member', email, '--project', 'default', '--role', role, ...where],
    { env: { ...env, NO_COLOR: '1', RUST_LOG: 'warn' }, encoding: 'utf8' },
  );
  const m = /^sign_in_link: (\S+)$/m.exec(out);
  if (!m) throw new Error('no sign_in_link line: ' + out);
  return m[1];
}

/** Throws when a request of the pages left the server's origin (or the cluster's nodes'). */
export function assertSameOrigin(urls, ...bases) {
  const origins = new Set(bases.map((b) => new URL(b).origin));
  const foreign = urls.filter((u) => !origins.has(new URL(u).origin) && !u.startsWith('data:'));
  if (foreign.length) throw new Error('requests left the origin: ' + foreign.join(', '));
}

/** Closes the browser, stops the server (if any) and removes the walk's directories. */
export async function finish(context, server, dirs) {
  if (context) await context.close().catch(() => {});
  if (server) {
    const exit = await stopProcess(server);
    log(`  herald stopped (exit code ${exit.code}${exit.signal ? ', signal ' + exit.signal : ''})`);
  }
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

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

/**
 * Three `herald serve` nodes on one fresh PostgreSQL database
 * (HERALD_TEST_PG, default the local server, trust auth) and a nats-server
 * of this walk's own: `{nodes, store, output, stop}`, each node as
 * spawnHerald gives it. `stop` stops them all and drops the database.
 */
export async function startCluster(keys, n = 3) {
  const pg = (process.env.HERALD_TEST_PG || 'postgres://postgres@127.0.0.1:5432').replace(/\/$/, '');
  const nats = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => existsSync(p));
  if (!nats) throw new Error('nats-server is not installed (Debian: nats-server)');
  const db = `herald_browser_${hex(6)}`;
  const psql = (sql) => execFileSync('psql', [`${pg}/postgres`, '-qAtc', sql], { encoding: 'utf8' });
  const work = mkdtempSync(path.join(tmpdir(), 'herald-browser-cluster-'));
  const port = await freePort();
  const bus = spawn(nats, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const nodes = [];
  const stop = async () => {
    for (const node of nodes) await stopProcess(node);
    bus.kill('SIGTERM');
    try { psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`); } catch (e) { log(`  (could not drop ${db}: ${e.message})`); }
    rmSync(work, { recursive: true, force: true });
  };
  try {
    psql(`CREATE DATABASE ${db}`);
    const store = `${pg}/${db}`;
    for (let i = 0; i < n; i++) {
      // One at a time: the first creates the schema and the project.
      const node = spawnHerald(path.join(work, `node${i}`), keys, '127.0.0.1:0',
        ['--store', store, '--bus', `nats://127.0.0.1:${port}`]);
      nodes.push(node);
      node.base = await node.address;
      await sleep(50);
    }
    const output = () => nodes.flatMap((node, i) => node.output.slice(-10).map((l) => `[node ${i}] ${l}`));
    return { nodes, store, output, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
