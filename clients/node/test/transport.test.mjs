// The transport's own rules, checked without herald: Retry-After parsing,
// the backoff's bounds, a Retry-After longer than retryMaxDelayMs not waited
// for, and an answer that is not the API's shape (a proxy's HTML page) typed
// as a protocol error and not retried. A local HTTP server stands in for
// what sits in front of herald; herald's own answers are tested elsewhere.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Herald, HeraldApiError, HeraldProtocolError, parseRetryAfter } from '../dist/index.js';

test('parseRetryAfter: seconds, an HTTP date, nothing usable', () => {
  assert.equal(parseRetryAfter('3'), 3000);
  assert.equal(parseRetryAfter('0'), 0);
  const now = Date.parse('2026-11-29T10:00:00Z');
  assert.equal(parseRetryAfter('Sun, 29 Nov 2026 10:00:05 GMT', now), 5000);
  assert.equal(parseRetryAfter('Sun, 29 Nov 2026 09:00:00 GMT', now), 0);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter('soon'), undefined);
});

test('backoff: full jitter under an exponential, capped step; never under Retry-After', () => {
  const h = new Herald({ baseUrl: 'http://127.0.0.1:9', publicKey: 'pk', secretKey: 'sk', retryBaseDelayMs: 100, retryMaxDelayMs: 1000 });
  for (let i = 0; i < 200; i++) {
    const a1 = h.transport.backoff(1, undefined);
    const a3 = h.transport.backoff(3, undefined);
    const a9 = h.transport.backoff(9, undefined);
    assert.ok(a1 >= 0 && a1 <= 100);
    assert.ok(a3 >= 0 && a3 <= 400);
    assert.ok(a9 >= 0 && a9 <= 1000);
    assert.ok(h.transport.backoff(1, 2000) >= 2000);
  }
  assert.throws(() => new Herald({ baseUrl: 'x', publicKey: 'p', secretKey: 's', maxRetries: -1 }), TypeError);
  assert.throws(() => new Herald({ baseUrl: 'x', publicKey: 'p' }), /secretKey is required/);
});

async function serve(handler, fn) {
  const hits = [];
  const srv = http.createServer((req, res) => {
    hits.push(req.url);
    handler(req, res);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  try {
    await fn(`http://127.0.0.1:${srv.address().port}`, hits);
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
}

test('a Retry-After beyond retryMaxDelayMs is reported at once instead of waited for', async () => {
  const body = JSON.stringify({ error: { code: 'rate_limited', status: 429, message: 'slow down', request_id: 'r1', details: { retry_after: 120, limit: 1, window: 1 } } });
  await serve(
    (req, res) => res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '120' }).end(body),
    async (base, hits) => {
      const h = new Herald({ baseUrl: base, publicKey: 'pk', secretKey: 'sk', retryMaxDelayMs: 5000 });
      const t0 = Date.now();
      await assert.rejects(h.project.get(), (e) => e instanceof HeraldApiError && e.code === 'rate_limited' && e.retryAfter === 120 && e.requestId === 'r1');
      assert.ok(Date.now() - t0 < 2000);
      assert.equal(hits.length, 1);
    },
  );
});

test('an HTML 502 from a proxy is a HeraldProtocolError, not retried', async () => {
  await serve(
    (req, res) => res.writeHead(502, { 'content-type': 'text/html', 'x-request-id': 'proxy-1' }).end('<h1>Bad gateway</h1>'),
    async (base, hits) => {
      const h = new Herald({ baseUrl: base, publicKey: 'pk', secretKey: 'sk' });
      await assert.rejects(h.users.get('a'), (e) => e instanceof HeraldProtocolError && e.kind === 'protocol' && e.status === 502 && e.requestId === 'proxy-1');
      assert.equal(hits.length, 1);
    },
  );
});
