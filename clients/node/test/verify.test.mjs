// verifyEvent on its own, no server: the Standard Webhooks specification's
// own test vector (its signature verifies, so only the body, which is no
// Herald event, is refused), a flipped signature, unknown signature
// versions, several signatures in one header, a malformed secret or timestamp.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { verifyEvent, checkEvent, EventVerificationError } from '../dist/index.js';

const vector = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  headers: {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  },
  body: '{"test": 2432232314}',
  now: 1614265330,
};

test('the Standard Webhooks test vector: the signature verifies', () => {
  const r = checkEvent(vector.body, vector.headers, vector.secret, { now: vector.now });
  assert.equal(r.ok, false);
  assert.equal(r.error.reason, 'invalid_body', 'past the signature check: only the body is not an event');
  const flipped = { ...vector.headers, 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF=' };
  assert.equal(checkEvent(vector.body, flipped, vector.secret, { now: vector.now }).error.reason, 'no_matching_signature');
});

function signed(body, secret, id = 'evt_1', ts = Math.floor(Date.now() / 1000)) {
  const key = Buffer.from(secret.slice(6), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` };
}

test('several signatures in one header, unknown versions ignored, header arrays and case', () => {
  const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
  const body = JSON.stringify({ type: 'delivery.sent', timestamp: '2026-11-29T10:00:00.000Z', data: { id: 'd1' } });
  const h = signed(body, secret);
  const headers = {
    'Webhook-Id': h['webhook-id'],
    'WEBHOOK-TIMESTAMP': h['webhook-timestamp'],
    'webhook-signature': [`v1a,${'x'.repeat(10)} v1,AAAA`, h['webhook-signature']],
  };
  const e = verifyEvent(body, headers, secret);
  assert.deepEqual([e.id, e.type, e.data.id], ['evt_1', 'delivery.sent', 'd1']);
  assert.throws(() => verifyEvent(body, { ...h, 'webhook-signature': `v1a,${h['webhook-signature'].slice(3)}` }, secret), (x) => x.reason === 'no_matching_signature');
});

test('a malformed secret or timestamp is refused with its reason', () => {
  const secret = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
  const body = JSON.stringify({ type: 'delivery.sent', timestamp: 'x', data: {} });
  const h = signed(body, secret);
  assert.throws(() => verifyEvent(body, h, 'whsec_***'), (e) => e instanceof EventVerificationError && e.reason === 'invalid_secret');
  assert.throws(() => verifyEvent(body, h, []), (e) => e.reason === 'invalid_secret');
  assert.throws(() => verifyEvent(body, { ...h, 'webhook-timestamp': '12a' }, secret), (e) => e.reason === 'invalid_timestamp');
  assert.equal(verifyEvent(new TextEncoder().encode(body), h, secret).type, 'delivery.sent');
});
