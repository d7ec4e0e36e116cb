// Idempotency keys, retries and typed errors against the real binary: a
// creating call retried after its answer was lost replays instead of running
// twice; 429 (a server started with --admin-rate 1) and 503 (the store
// refusing writes while the disk is below --min-free-space) are retried after
// their Retry-After; a 422 and other 4xx are not retried; network failures
// and timeouts are typed and retried only when a repeat is safe.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startHerald, client, activeFlow, hex, sleep, waitFor } from './helpers.mjs';
import {
  Herald,
  HeraldError,
  HeraldApiError,
  HeraldNetworkError,
  HeraldTimeoutError,
  responseOf,
} from '../dist/index.js';

let server;
before(async () => {
  server = await startHerald();
});
after(async () => {
  await server?.stop();
});

/** A fetch that records each request's headers and, for the first request matching `lose`, drops the answer after the server handled it. */
function losingFetch(lose) {
  const seen = [];
  let lost = false;
  const f = async (url, init) => {
    seen.push({ url: String(url), method: init.method, headers: { ...init.headers } });
    const res = await fetch(url, init);
    if (!lost && lose(String(url), init)) {
      lost = true;
      await res.arrayBuffer(); // the server answered; the client never sees it
      throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
    }
    return res;
  };
  return { fetch: f, seen };
}

test('a run whose answer was lost is retried with the same automatic key and replays: one run, not two', async () => {
  const setup = client(server);
  const flow = await activeFlow(setup);
  const lf = losingFetch((url, init) => init.method === 'POST' && url.endsWith('/run'));
  const retries = [];
  const herald = client(server, { fetch: lf.fetch, onRetry: (e) => retries.push(e) });
  const run = await herald.flows.run(flow.handle, { recipients: [{ external_id: 'idem' }], data: { n: 1 } });

  const info = responseOf(run);
  assert.equal(info.replayed, true, 'the second attempt is answered from the idempotency store');
  assert.equal(info.attempts, 2);
  assert.equal(retries.length, 1);
  assert.ok(retries[0].error instanceof HeraldNetworkError);
  const keys = lf.seen.filter((s) => s.url.endsWith('/run')).map((s) => s.headers['idempotency-key']);
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  assert.equal(keys[0], info.idempotencyKey);

  const notes = await setup.notifications.list({ flow_id: flow.id }).toArray();
  assert.equal(notes.length, 1, 'exactly one notification: the run was not carried out twice');
  assert.equal(notes[0].flow_run_id, run.id);
});

test('without a key, a lost answer of a run is not retried (a repeat could run it twice)', async () => {
  const setup = client(server);
  const flow = await activeFlow(setup);
  const lf = losingFetch((url, init) => init.method === 'POST' && url.endsWith('/run'));
  const retries = [];
  const herald = client(server, { fetch: lf.fetch, onRetry: (e) => retries.push(e) });
  await assert.rejects(
    herald.flows.run(flow.id, { recipients: [{ external_id: 'nokey' }] }, { idempotencyKey: null }),
    (e) => e instanceof HeraldNetworkError && e.kind === 'network' && e.code === 'network_error' && e.status === 0,
  );
  assert.equal(retries.length, 0);
  assert.equal(lf.seen[0].headers['idempotency-key'], undefined);
});

test('an explicit idempotency key replays across calls; another payload under it is 409 idempotency_key_reused', async () => {
  const herald = client(server);
  const flow = await activeFlow(herald);
  const key = `signup-${hex(4)}`;
  const a = await herald.flows.run(flow.id, { recipients: [{ external_id: 'k1' }] }, { idempotencyKey: key });
  const b = await herald.flows.run(flow.id, { recipients: [{ external_id: 'k1' }] }, { idempotencyKey: key });
  assert.equal(b.id, a.id);
  assert.equal(responseOf(a).replayed, false);
  assert.equal(responseOf(b).replayed, true);
  await assert.rejects(herald.flows.run(flow.id, { recipients: [{ external_id: 'k2' }] }, { idempotencyKey: key }), (e) => {
    assert.ok(e instanceof HeraldApiError);
    assert.equal(e.code, 'idempotency_key_reused');
    assert.equal(e.status, 409);
    assert.equal(e.details.idempotency_key, key);
    assert.equal(e.details.resource, 'flow_run');
    return true;
  });
  // two calls without a key of their own get two keys: two runs
  const c = await herald.flows.run(flow.id, { recipients: [{ external_id: 'k1' }] });
  const d = await herald.flows.run(flow.id, { recipients: [{ external_id: 'k1' }] });
  assert.notEqual(c.id, d.id);
});

test('a 422 is not retried, and its error carries code, status, fields and the request id', async () => {
  const calls = [];
  const retries = [];
  const herald = client(server, {
    fetch: (u, i) => (calls.push(u), fetch(u, i)),
    onRetry: (e) => retries.push(e),
  });
  await assert.rejects(
    herald.flows.create({ handle: 'Not A Handle', name: '' }, { requestId: 'req-422-test' }),
    (e) => {
      assert.ok(e instanceof HeraldApiError && e instanceof HeraldError);
      assert.equal(e.kind, 'api');
      assert.equal(e.code, 'validation_failed');
      assert.equal(e.status, 422);
      assert.equal(e.requestId, 'req-422-test');
      assert.equal(e.type, 'https://herald.dev/errors#validation_failed-422');
      assert.ok(e.fields.some((f) => f.field === 'handle' && f.reason === 'format'));
      assert.deepEqual(e.details.fields, e.fields);
      return true;
    },
  );
  assert.equal(calls.length, 1);
  assert.equal(retries.length, 0);
});

test('other typed errors: 404 with details, 409 with a reason, 400 for a bad cursor, 401 for a wrong secret', async () => {
  const herald = client(server);
  await assert.rejects(herald.users.get('nobody-here'), (e) => {
    assert.equal(e.code, 'not_found');
    assert.deepEqual([e.details.resource, e.details.id], ['user', 'nobody-here']);
    assert.ok(e.requestId);
    assert.equal(e.headers.get('x-request-id'), e.requestId);
    return true;
  });
  const ch = (await herald.channels.list().toArray()).find((c) => c.type === 'in_app');
  await assert.rejects(herald.channels.delete(ch.id), (e) => e.code === 'conflict' && e.status === 409 && e.reason === 'invalid_transition');
  await assert.rejects(herald.users.list({ after: 'not-a-cursor' }).page(), (e) => e.code === 'bad_request' && e.reason === 'invalid_param' && e.details.param === 'after');
  const wrong = new Herald({ baseUrl: server.base, publicKey: server.keys.publicKey, secretKey: 'sk_test_wrong' });
  await assert.rejects(wrong.project.get(), (e) => e.code === 'unauthenticated' && e.status === 401 && e.details.reason === 'invalid_secret_key');
});

test('429: calls over --admin-rate wait for Retry-After and succeed; a run retried after a 429 is stored once', async () => {
  const limited = await startHerald({ extraArgs: ['--admin-rate', '1'] });
  try {
    const retries = [];
    const herald = client(limited, { onRetry: (e) => retries.push(e), maxRetries: 6 });
    const flow = await activeFlow(herald);
    const t0 = Date.now();
    const results = await Promise.all([1, 2, 3, 4].map(() => herald.project.get()));
    assert.equal(results.length, 4);
    const r429 = retries.filter((r) => r.error.status === 429);
    assert.ok(r429.length >= 1, 'at least one call was limited');
    for (const r of r429) {
      assert.equal(r.error.code, 'rate_limited');
      assert.ok(r.error.retryAfter >= 1);
      assert.ok(r.delayMs >= r.error.retryAfter * 1000, 'waits at least Retry-After');
    }
    assert.ok(Date.now() - t0 >= 1000);

    // a run sent while the budget is spent: 429 first, then stored once
    const before = retries.length;
    const runs = await Promise.all([1, 2, 3].map((n) => herald.flows.run(flow.id, { recipients: [{ external_id: `rl-${n}` }] })));
    assert.ok(retries.length > before, 'the runs met a 429');
    await waitFor('notifications', async () => (await herald.notifications.list({ flow_id: flow.id }).toArray()).length >= 3);
    const notes = await herald.notifications.list({ flow_id: flow.id }).toArray();
    assert.deepEqual(notes.map((n) => n.flow_run_id).sort(), runs.map((r) => r.id).sort());

    // with retries off the 429 is the error, with its details
    await sleep(2100);
    const noRetry = client(limited, { maxRetries: 0 });
    const settled = await Promise.allSettled([1, 2, 3, 4, 5].map(() => noRetry.project.get()));
    const rejected = settled.filter((s) => s.status === 'rejected').map((s) => s.reason);
    assert.ok(rejected.length >= 1);
    const e = rejected[0];
    assert.ok(e instanceof HeraldApiError);
    assert.equal(e.code, 'rate_limited');
    assert.equal(e.status, 429);
    assert.equal(typeof e.details.retry_after, 'number');
    assert.ok('limit' in e.details && 'window' in e.details);
  } finally {
    await limited.stop();
  }
});

/** Takes `bytes` of the filesystem holding `dir` (fallocate, else written zeros); returns the file. */
function fill(dir, bytes) {
  const file = path.join(dir, 'fill');
  try {
    execFileSync('fallocate', ['-l', String(bytes), file]);
  } catch {
    const fd = openSync(file, 'w');
    const chunk = Buffer.alloc(64 << 20);
    for (let done = 0; done < bytes; done += chunk.length) writeSync(fd, chunk);
    closeSync(fd);
  }
  return file;
}

test('503: writes refused while the disk is below --min-free-space are retried after Retry-After and succeed', async (t) => {
  const GiB = 2 ** 30;
  const scratch = mkdtempSync(path.join(tmpdir(), 'herald-node-fill-'));
  const free = () => {
    const s = statfsSync(scratch);
    return s.bavail * s.bsize;
  };
  if (free() < 8 * GiB) {
    rmSync(scratch, { recursive: true, force: true });
    t.skip(`needs 8 GiB free on ${tmpdir()} to push the disk below a reserve and back`);
    return;
  }
  // the reserve sits 1.5 GiB below what is free now (room for other writers
  // meanwhile); taking 3 GiB puts the disk well below it
  const reserve = free() - 1.5 * GiB;
  const disk = await startHerald({ extraArgs: ['--min-free-space', String(reserve)] });
  let filled = null;
  try {
    const retries = [];
    const herald = client(disk, {
      onRetry: (e) => {
        retries.push(e);
        // space comes back while the client waits: the store takes writes again within a second
        if (filled) rmSync(filled, { force: true });
      },
    });
    await herald.users.upsert('before-full');
    filled = fill(scratch, 3 * GiB);
    assert.ok(free() < reserve, 'the disk is below the reserve');
    await sleep(1100); // the store looks at the free space at most once a second
    const t0 = Date.now();
    const user = await herald.users.upsert('while-full', { first_name: 'Disk' });
    assert.equal(user.external_id, 'while-full');
    const r503 = retries.filter((r) => r.error.status === 503);
    assert.ok(r503.length >= 1, 'the first attempt met a 503');
    const e = r503[0].error;
    assert.ok(e instanceof HeraldApiError);
    assert.equal(e.code, 'service_unavailable');
    const after = Number(e.headers.get('retry-after'));
    assert.ok(after >= 1);
    assert.ok(r503[0].delayMs >= after * 1000, 'waits at least Retry-After');
    assert.ok(Date.now() - t0 >= after * 1000);
    assert.equal(responseOf(user).attempts, r503.length + 1);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await disk.stop();
  }
});

test('network failures: a GET is retried then throws HeraldNetworkError; a non-repeatable POST is not retried', async () => {
  // a port nobody listens on
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  await new Promise((r) => srv.close(r));
  const retries = [];
  const herald = new Herald({ baseUrl: `http://127.0.0.1:${port}`, publicKey: 'pk', secretKey: 'sk', maxRetries: 2, retryBaseDelayMs: 10, onRetry: (e) => retries.push(e) });
  await assert.rejects(herald.users.get('x'), (e) => e instanceof HeraldNetworkError && e.status === 0 && e.code === 'network_error' && e.requestId === null);
  assert.equal(retries.length, 2);
  retries.length = 0;
  await assert.rejects(herald.webhookEndpoints.create({ url: 'https://example.com/h' }), (e) => e instanceof HeraldNetworkError);
  assert.equal(retries.length, 0);
  // a creating POST carries a key, so it is retried
  await assert.rejects(herald.flows.create({ handle: 'x', name: 'x' }), (e) => e instanceof HeraldNetworkError);
  assert.equal(retries.length, 2);
});

test('a server that never answers: HeraldTimeoutError after timeoutMs, per attempt', async () => {
  const sockets = new Set();
  const silent = net.createServer((s) => sockets.add(s));
  await new Promise((r) => silent.listen(0, '127.0.0.1', r));
  try {
    const herald = new Herald({ baseUrl: `http://127.0.0.1:${silent.address().port}`, publicKey: 'pk', secretKey: 'sk', timeoutMs: 200, maxRetries: 1, retryBaseDelayMs: 10 });
    const t0 = Date.now();
    await assert.rejects(herald.project.get(), (e) => {
      assert.ok(e instanceof HeraldTimeoutError && e instanceof HeraldNetworkError);
      assert.equal(e.kind, 'timeout');
      assert.equal(e.code, 'timeout');
      return true;
    });
    assert.ok(Date.now() - t0 >= 400);
    // the caller's own signal cancels at once, and is not a HeraldError
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stop')), 50);
    await assert.rejects(herald.project.get({ signal: ac.signal, timeoutMs: 5000 }), (e) => e.message === 'stop');
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});
