// Event endpoints and verifyEvent against real events: herald (with the
// loopback address allowed as a destination) POSTs to an HTTP listener of
// this test; the events verify with the endpoint's secret, a tampered body or
// a stale timestamp is refused, and after a secret rotation both the old and
// the new secret verify. Every webhookEndpoints method is called.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startHerald, client, uncalled, activeFlow, waitFor } from './helpers.mjs';
import { verifyEvent, checkEvent, EventVerificationError } from '../dist/index.js';

let server;
let herald;
let listener;
const received = []; // {headers, body (raw string)}

before(async () => {
  listener = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise((r) => listener.listen(0, '127.0.0.1', r));
  server = await startHerald({ extraArgs: ['--egress-allow', '127.0.0.1'] });
  herald = client(server);
});
after(async () => {
  await server?.stop();
  listener?.closeAllConnections?.();
  await new Promise((r) => (listener ? listener.close(r) : r()));
});

const url = () => `http://127.0.0.1:${listener.address().port}/herald-events`;
const eventsOf = (type) => received.filter((r) => JSON.parse(r.body).type === type);

let endpoint;
let flow;

test('a real event verifies with the endpoint secret; a tampered body and a stale timestamp do not', async () => {
  endpoint = await herald.webhookEndpoints.create({ url: url(), event_types: ['flow_run.accepted'] });
  assert.match(endpoint.secret, /^whsec_/);
  flow = await activeFlow(herald);
  const run = await herald.flows.run(flow.id, { recipients: [{ external_id: 'ev' }], data: { n: 1 } });
  const got = await waitFor('the flow_run.accepted event', () => eventsOf('flow_run.accepted')[0]);

  const event = verifyEvent(got.body, got.headers, endpoint.secret);
  assert.equal(event.type, 'flow_run.accepted');
  assert.equal(event.data.id, run.id);
  assert.equal(event.id, got.headers['webhook-id']);

  // the same with a Headers object and bytes
  const h = new Headers(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
  assert.equal(verifyEvent(Buffer.from(got.body), h, endpoint.secret).id, event.id);

  const tampered = got.body.replace(run.id, '00000000-0000-7000-8000-000000000000');
  assert.notEqual(tampered, got.body);
  assert.throws(() => verifyEvent(tampered, got.headers, endpoint.secret), (e) => e instanceof EventVerificationError && e.reason === 'no_matching_signature');
  const wrong = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
  const r = checkEvent(got.body, got.headers, wrong);
  assert.equal(r.ok, false);
  assert.equal(r.error.reason, 'no_matching_signature');
  // a list of secrets passes when any one matches (a receiver switching secrets)
  assert.equal(checkEvent(got.body, got.headers, [wrong, endpoint.secret]).ok, true);

  const ts = Number(got.headers['webhook-timestamp']);
  assert.throws(() => verifyEvent(got.body, got.headers, endpoint.secret, { now: ts + 301 }), (e) => e.reason === 'timestamp_too_old');
  assert.throws(() => verifyEvent(got.body, got.headers, endpoint.secret, { now: ts - 301 }), (e) => e.reason === 'timestamp_too_new');
  assert.equal(verifyEvent(got.body, got.headers, endpoint.secret, { now: ts + 3600, toleranceSeconds: 7200 }).id, event.id);
  const { ['webhook-signature']: _, ...unsigned } = got.headers;
  assert.throws(() => verifyEvent(got.body, unsigned, endpoint.secret), (e) => e.reason === 'missing_header');
});

test('after rotate_secret both signatures come, and either secret verifies', async () => {
  const oldSecret = endpoint.secret;
  const rotated = await herald.webhookEndpoints.rotateSecret(endpoint.id);
  assert.match(rotated.secret, /^whsec_/);
  assert.notEqual(rotated.secret, oldSecret);
  const before = eventsOf('flow_run.accepted').length;
  await herald.flows.run(flow.id, { recipients: [{ external_id: 'ev' }], data: { n: 2 } });
  const got = await waitFor('a second event', () => eventsOf('flow_run.accepted')[before]);
  assert.equal(got.headers['webhook-signature'].split(' ').length, 2);
  assert.equal(verifyEvent(got.body, got.headers, rotated.secret).type, 'flow_run.accepted');
  assert.equal(verifyEvent(got.body, got.headers, oldSecret).type, 'flow_run.accepted');
  endpoint = { ...endpoint, secret: rotated.secret };
});

test('webhookEndpoints: get, list, update, attempts, replay, delete', async () => {
  assert.equal((await herald.webhookEndpoints.get(endpoint.id)).url, url());
  assert.deepEqual((await herald.webhookEndpoints.list().toArray()).map((e) => e.id), [endpoint.id]);
  const updated = await herald.webhookEndpoints.update(endpoint.id, { event_types: ['flow_run.accepted', 'delivery.sent'] });
  assert.deepEqual(updated.event_types, ['flow_run.accepted', 'delivery.sent']);

  const attempts = await waitFor('two attempts', async () => {
    const a = await herald.webhookEndpoints.attempts(endpoint.id, { limit: 1 }).toArray();
    return a.length >= 2 && a;
  });
  assert.ok(attempts.every((a) => a.status_code === 200 && a.event_type === 'flow_run.accepted'));

  const firstId = eventsOf('flow_run.accepted')[0].headers['webhook-id'];
  const before = received.length;
  const replay = await herald.webhookEndpoints.replay(endpoint.id, { since: new Date(Date.now() - 3600_000).toISOString() });
  assert.ok(replay.queued >= 2);
  const again = await waitFor('the replayed events', () => {
    const r = received.slice(before).filter((x) => x.headers['webhook-id'] === firstId);
    return r.length > 0 && r[0];
  });
  // a replay carries the original id and body, signed anew with the current secret
  assert.equal(verifyEvent(again.body, again.headers, endpoint.secret).id, firstId);

  await herald.webhookEndpoints.delete(endpoint.id);
  await assert.rejects(herald.webhookEndpoints.get(endpoint.id), (e) => e.code === 'not_found');
});

test('every method of webhookEndpoints was called', () => {
  assert.deepEqual(uncalled(herald, ['webhookEndpoints']), []);
});
