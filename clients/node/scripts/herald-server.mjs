// Starts and stops the real `herald` binary for herald-node's tests and its
// type generator: a temp data dir, random bootstrap keys (pk_test_/sk_test_ +
// 32 hex), 127.0.0.1 and a free port only. Adapted from clients/js's starter;
// `extraArgs` passes `herald serve` flags (a low --admin-rate, --egress-allow…).

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '..', '..', '..');
export const BIN = process.env.HERALD_BIN ? path.resolve(process.env.HERALD_BIN) : path.join(ROOT, 'target/debug/herald');

export const hex = (n) => randomBytes(n).toString('hex');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Spawns `herald serve` on `dataDir` with the given bootstrap keys. */
function spawnHerald(dataDir, keys, extraArgs) {
  // the parent's HERALD_* (HERALD_BIN, a developer's settings) must not leak into the server
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HERALD_')) env[k] = v;
  Object.assign(env, {
    HERALD_BOOTSTRAP_PUBLIC_KEY: keys.publicKey,
    HERALD_BOOTSTRAP_SECRET_KEY: keys.secretKey,
    NO_COLOR: '1',
    RUST_LOG: 'warn',
  });
  const child = spawn(BIN, ['serve', '--bind', '127.0.0.1:0', '--data-dir', dataDir, ...extraArgs], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const address = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no `listening on http://ADDR` line within 60 s')), 60_000);
    child.on('error', (e) => reject(new Error(`cannot start ${BIN}: ${e.message}`)));
    exited.then(({ code, signal }) =>
      reject(new Error(`herald exited early (code ${code}, signal ${signal}):\n${output.slice(-10).join('\n')}`)),
    );
    for (const stream of [child.stdout, child.stderr]) {
      let buf = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          output.push(line);
          if (output.length > 200) output.shift();
          const m = /listening on (http:\/\/[^\s"',;<>]+)/.exec(line);
          if (m) {
            clearTimeout(timer);
            resolve(m[1].replace(/[.)]+$/, ''));
          }
        }
      });
    }
  });
  return { child, output, exited, address };
}

/** SIGTERM, then SIGKILL after 15 s; resolves with the exit. */
async function stopProcess(p) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.exited;
  p.child.kill('SIGTERM');
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(null), 15_000)));
  const result = await Promise.race([p.exited, timeout]);
  clearTimeout(timer); // a pending timer would keep the test process alive 15 s
  if (result) return result;
  p.child.kill('SIGKILL');
  return p.exited;
}

/** A running herald: `base` (http://127.0.0.1:PORT), `keys`, `dataDir`, `output()`, `stop()`. */
export async function startHerald({ extraArgs = [] } = {}) {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-node-'));
  const proc = spawnHerald(dataDir, keys, extraArgs);
  let base;
  try {
    base = await proc.address;
  } catch (e) {
    await stopProcess(proc);
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    base,
    keys,
    dataDir,
    output: () => proc.output.join('\n'),
    async stop() {
      await stopProcess(proc);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Fetches /openapi.json from a fresh herald (for the type generator and its drift check). */
export async function fetchOpenapi() {
  const server = await startHerald();
  try {
    const res = await fetch(server.base + '/openapi.json');
    if (res.status !== 200) throw new Error(`/openapi.json -> ${res.status}`);
    return await res.json();
  } finally {
    await server.stop();
  }
}
