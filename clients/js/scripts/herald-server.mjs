// Starts and stops the real `herald` binary for the client's tests, the type
// generators, the browser test (tests/browser) and the tests of herald-node and
// herald-react (clients/node, clients/react): a temp data dir, random bootstrap keys (pk_test_/sk_test_ + 32 hex),
// 127.0.0.1 only. `restart()` brings the same data dir back up on the same port,
// so a client can reconnect to the URL it already has. Also a tiny admin helper
// (users, an active in_app flow, runs) for setting up what the tests need.

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

/** Spawns `herald serve` on `dataDir` (no keys printed: they are the bootstrap ones). */
export function spawnHerald(dataDir, keys, bind, extraArgs = []) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HERALD_')) env[k] = v;
  Object.assign(env, {
    HERALD_BOOTSTRAP_PUBLIC_KEY: keys.publicKey,
    HERALD_BOOTSTRAP_SECRET_KEY: keys.secretKey,
    NO_COLOR: '1',
    RUST_LOG: 'warn',
  });
  const child = spawn(BIN, ['serve', '--bind', bind, '--data-dir', dataDir, ...extraArgs], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const address = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no `listening on http://ADDR` line within 60 s')), 60_000);
    child.on('error', (e) => reject(new Error(`cannot start ${BIN}: ${e.message}`)));
    exited.then(({ code, signal }) => reject(new Error(`herald exited early (code ${code}, signal ${signal}):\n${output.slice(-10).join('\n')}`)));
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

/** SIGTERM (or `signal`), then SIGKILL after 15 s; resolves with the exit. */
export async function stopProcess(p, signal = 'SIGTERM') {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.exited;
  p.child.kill(signal);
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(null), 15_000)));
  const result = await Promise.race([p.exited, timeout]);
  clearTimeout(timer); // a pending timer would keep the test process alive 15 s
  if (result) return result;
  p.child.kill('SIGKILL');
  return p.exited;
}

/** A running herald: `base` (http://127.0.0.1:PORT), `keys`, `stop()`, `restart()`. */
export async function startHerald({ extraArgs = [] } = {}) {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-jsclient-'));
  let proc = spawnHerald(dataDir, keys, '127.0.0.1:0', extraArgs);
  let base;
  try {
    base = await proc.address;
  } catch (e) {
    await stopProcess(proc);
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const port = new URL(base).port;
  const server = {
    base,
    keys,
    dataDir,
    output: () => proc.output.join('\n'),
    /** Stops the process (SIGTERM by default: sockets get 1001; SIGKILL: they just drop). */
    async kill(signal = 'SIGTERM') {
      return stopProcess(proc, signal);
    },
    /** Starts it again on the same data dir and port. */
    async start() {
      for (let i = 0; ; i++) {
        proc = spawnHerald(dataDir, keys, `127.0.0.1:${port}`, extraArgs);
        try {
          const again = await proc.address;
          if (again !== base) throw new Error(`restarted on ${again}, not ${base}`);
          return;
        } catch (e) {
          if (i >= 20) throw e;
          await sleep(250); // the port may linger a moment
        }
      }
    },
    async stop() {
      await stopProcess(proc);
      rmSync(dataDir, { recursive: true, force: true });
    },
    admin: adminClient(base, keys),
  };
  return server;
}

/** Admin API calls with the project's secret key; throws on an unexpected status. */
export function adminClient(base, keys) {
  async function call(method, p, body, headers = {}) {
    const res = await fetch(base + '/admin/v1' + p, {
      method,
      headers: {
        'x-service-api-key': keys.publicKey,
        'x-service-secret-key': keys.secretKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    if (res.status >= 300) throw new Error(`${method} ${p} -> ${res.status} ${text.slice(0, 400)}`);
    return json;
  }
  const admin = {
    call,
    async user(ext, fields = { first_name: 'Ada' }) {
      return call('PUT', `/users/${encodeURIComponent(ext)}`, fields);
    },
    async inAppChannel() {
      const channels = await call('GET', '/channels?limit=1000');
      return channels.items.find((c) => c.type === 'in_app');
    },
    /** An active flow with one in_app step: subject `{{ data.title }}`, body `{{ data.n }}`. */
    async inAppFlow() {
      const ch = await admin.inAppChannel();
      const flow = await call('POST', '/flows', {
        handle: `f-${hex(4)}`,
        name: 'Client test',
        steps: [{ type: 'channel', channel_id: ch.id, template: { subject: '{{ data.title }}', body: 'n={{ data.n }}' } }],
      });
      await call('POST', `/flows/${flow.id}/activate`);
      return flow;
    },
    /**
     * An active in_app flow in the preference category `category` (declared
     * here), with `actions` (action buttons) on its template when given.
     */
    async categoryFlow(category, actions) {
      await call('PUT', `/categories/${category}`, { name: category[0].toUpperCase() + category.slice(1) });
      const ch = await admin.inAppChannel();
      const template = { subject: '{{ data.title }}', body: 'n={{ data.n }}' };
      if (actions) template.actions = actions;
      const flow = await call('POST', '/flows', {
        handle: `f-${hex(4)}`,
        name: `In ${category}`,
        categories: [category],
        steps: [{ type: 'channel', channel_id: ch.id, template }],
      });
      await call('POST', `/flows/${flow.id}/activate`);
      return flow;
    },
    async run(flowId, ext, data) {
      return call('POST', `/flows/${flowId}/run`, { recipients: [{ external_id: ext }], data });
    },
  };
  return admin;
}

/** Fetches /openapi.json from a fresh herald (for the type generator and its drift test). */
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
