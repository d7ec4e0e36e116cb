// herald-client's user tokens against the real herald binary (security mode on,
// RS256 JWTs signed here with the project's generated key): an expired token
// makes a request call onTokenExpired and retry with the new one; setUserToken
// replaces it; a live socket whose token expired gets 4401, asks for a new token
// and comes back; without a new token it stops (`unauthorized`); turning
// security mode on closes a user-id socket with 4401 and the client stops.

import assert from 'node:assert/strict';
import { createSign } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Herald, HeraldError, hex, setup, sleep, startHerald, waitFor } from './helpers.mjs';

let server;
let privateKey;
before(async () => {
  server = await startHerald();
  privateKey = (await server.admin.call('POST', '/project/signing_key')).private_key;
});
after(async () => {
  await server?.stop();
});

function jwt(sub, expInSeconds) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ sub, exp: Math.floor(Date.now() / 1000) + expInSeconds })}`;
  const sig = createSign('RSA-SHA256').update(body).sign(privateKey).toString('base64url');
  return `${body}.${sig}`;
}
// the server allows 30 s of leeway: "expired" means more than that in the past
const expired = (sub) => jwt(sub, -120);
const fresh = (sub) => jwt(sub, 3600);

async function withSecurityMode(on) {
  await server.admin.call('PUT', '/project', { security_mode: on });
}

test('token_expired on a request: onTokenExpired is called once, its token is used and kept', async () => {
  const ext = `tok-${hex(4)}`;
  await server.admin.user(ext, { first_name: 'Tess' });
  const calls = [];
  const h = new Herald({
    baseUrl: server.base,
    publicKey: server.keys.publicKey,
    userToken: expired(ext),
    onTokenExpired: async (err) => {
      calls.push(err);
      return fresh(ext);
    },
  });
  const [a, b] = await Promise.all([h.me(), h.getPreferences()]);
  assert.equal(a.external_id, ext);
  assert.ok(b.channel_types);
  assert.equal(calls.length, 1, 'two requests, one refresh');
  assert.ok(calls[0] instanceof HeraldError);
  assert.equal(calls[0].reason, 'token_expired');
  assert.equal(calls[0].status, 401);
  await h.me();
  assert.equal(calls.length, 1, 'the new token was kept');
});

test('token_expired and no new token: the HeraldError reaches the caller', async () => {
  const ext = `tok-${hex(4)}`;
  await server.admin.user(ext);
  let called = 0;
  const h = new Herald({
    baseUrl: server.base,
    publicKey: server.keys.publicKey,
    userToken: expired(ext),
    onTokenExpired: () => {
      called += 1;
      return null;
    },
  });
  const err = await h.me().catch((x) => x);
  assert.equal(called, 1);
  assert.ok(err instanceof HeraldError);
  assert.equal(err.code, 'unauthenticated');
  assert.equal(err.reason, 'token_expired');
  assert.equal(err.details.auth, 'user_key_jwt');
});

test('setUserToken replaces the token for the next request', async () => {
  const [x, y] = [`tok-${hex(4)}`, `tok-${hex(4)}`];
  await server.admin.user(x);
  await server.admin.user(y);
  const h = new Herald({ baseUrl: server.base, publicKey: server.keys.publicKey, userToken: fresh(x) });
  assert.equal((await h.me()).external_id, x);
  const t = fresh(y);
  h.setUserToken(t);
  assert.equal(h.userToken, t);
  assert.equal((await h.me()).external_id, y);
  assert.throws(() => h.setUserToken(''), /empty/);
});

test('live socket with an expired token: error frame and 4401, onTokenExpired, then live with the new token', async () => {
  const s = await setup(server);
  let calls = 0;
  const h = new Herald({
    baseUrl: server.base,
    publicKey: server.keys.publicKey,
    userToken: fresh(s.ext),
    reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
    onTokenExpired: (err) => {
      calls += 1;
      assert.equal(err.reason, 'token_expired');
      return fresh(s.ext);
    },
  });
  // the REST calls succeed with the fresh token; the socket then gets an expired one
  await h.feed.fetch();
  h.setUserToken(expired(s.ext));
  const events = [];
  const unsubscribe = h.feed.subscribe((_, e) => events.push(e));
  try {
    await waitFor('live', () => h.feed.state.connection === 'live');
    assert.equal(calls, 1);
    const states = events.filter((e) => e.type === 'connection').map((e) => e.state);
    assert.deepEqual(states, ['connecting', 'connecting', 'live'], 'the 4401 led straight to a reconnect');
    await s.run({ title: 'after the refresh', n: 1 });
    await waitFor('the entry', () => h.feed.state.items.some((e) => e.data.subject === 'after the refresh'));
  } finally {
    unsubscribe();
  }
});

test('live socket with an expired token and no new one: stops as unauthorized with the HeraldError', async () => {
  const s = await setup(server);
  const h = new Herald({
    baseUrl: server.base,
    publicKey: server.keys.publicKey,
    userToken: expired(s.ext),
    reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
    onTokenExpired: () => undefined,
  });
  const events = [];
  const unsubscribe = h.feed.subscribe((_, e) => events.push(e));
  try {
    await waitFor('unauthorized', () => h.feed.state.connection === 'unauthorized');
    const stop = events.find((e) => e.type === 'connection' && e.state === 'unauthorized');
    assert.equal(stop.code, 4401);
    assert.equal(h.feed.state.error.reason, 'token_expired');
    await sleep(800);
    assert.equal(events.filter((e) => e.type === 'connection' && e.state === 'connecting').length, 1, 'no reconnect loop');
  } finally {
    unsubscribe();
  }
});

// last: it turns security mode on for the whole project
test('security mode turned on: a user-id socket is closed with 4401 and the client stops', async () => {
  await withSecurityMode(false);
  const s = await setup(server);
  const events = [];
  const unsubscribe = s.herald.feed.subscribe((_, e) => events.push(e));
  try {
    await waitFor('live', () => s.herald.feed.state.connection === 'live');
    await withSecurityMode(true);
    await waitFor('unauthorized', () => s.herald.feed.state.connection === 'unauthorized');
    assert.equal(events.find((e) => e.state === 'unauthorized').code, 4401);
    const err = await s.herald.me().catch((x) => x);
    assert.equal(err.reason, 'missing_user_key');
  } finally {
    unsubscribe();
  }
});
