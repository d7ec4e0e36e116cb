// The suppression list against a real herald: add (201 new, 200 existing,
// normalised), list with the channel_type filter across pages, remove with
// a phone number's `+` encoded in the path, and the errors; every method of
// the namespace is called (the last test checks it).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHerald, client, uncalled, hex } from './helpers.mjs';
import { HeraldApiError, responseOf } from '../dist/index.js';

let server;
let herald;
before(async () => {
  server = await startHerald();
  herald = client(server);
});
after(async () => {
  await server?.stop();
});

test('add: 201 with the normalised address, 200 with the existing entry; no Idempotency-Key is sent', async () => {
  const first = await herald.suppressions.add({ channel_type: 'email', address: '  Bounced@Example.COM ' });
  assert.equal(responseOf(first).status, 201);
  assert.deepEqual([first.channel_type, first.address, first.reason], ['email', 'bounced@example.com', 'manual']);
  assert.ok(first.created_at);
  assert.equal(responseOf(first).idempotencyKey, null);

  const again = await herald.suppressions.add({ channel_type: 'email', address: 'bounced@example.com', reason: 'manual' });
  assert.equal(responseOf(again).status, 200);
  assert.equal(again.created_at, first.created_at);
  await herald.suppressions.remove('email', 'bounced@example.com');
});

test('list: every entry newest first across pages, the channel_type filter kept on every page', async () => {
  const emails = [];
  const phones = [];
  for (let i = 0; i < 5; i++) {
    emails.push((await herald.suppressions.add({ channel_type: 'email', address: `p${i}-${hex(3)}@example.com` })).address);
    phones.push((await herald.suppressions.add({ channel_type: 'sms', address: `+1555000${1000 + i}` })).address);
  }
  const sms = [];
  let pages = 0;
  for await (const page of herald.suppressions.list({ channel_type: 'sms', limit: 2 }).pages()) {
    pages += 1;
    assert.ok(page.items.length <= 2);
    for (const s of page.items) {
      assert.equal(s.channel_type, 'sms');
      sms.push(s.address);
    }
  }
  assert.equal(pages, 3);
  assert.deepEqual(sms, [...phones].reverse());

  const onlyEmail = await herald.suppressions.list({ channel_type: 'email', limit: 2 }).toArray();
  assert.deepEqual(onlyEmail.map((s) => s.address), [...emails].reverse());

  const all = await herald.suppressions.list({ limit: 3 }).toArray();
  assert.equal(all.length, 10);

  const first = await herald.suppressions.list({ channel_type: 'sms', limit: 2 }).page();
  assert.ok(first.hasNext);
  const second = await first.next();
  assert.deepEqual(second.items.map((s) => s.address), [phones[2], phones[1]]);

  for (const a of emails) await herald.suppressions.remove('email', a);
  for (const a of phones) await herald.suppressions.remove('sms', a);
  assert.deepEqual(await herald.suppressions.list().toArray(), []);
});

test('remove: a phone number\'s + is sent as %2B, so the E.164 number is lifted', async () => {
  await herald.suppressions.add({ channel_type: 'sms', address: '+15551234567' });
  const paths = [];
  const spy = client(server, {
    fetch: (url, init) => {
      paths.push(new URL(String(url)).pathname);
      return fetch(url, init);
    },
  });
  assert.equal(await spy.suppressions.remove('sms', '+15551234567'), undefined);
  assert.deepEqual(paths, ['/admin/v1/suppressions/sms/%2B15551234567']);
  assert.deepEqual(await herald.suppressions.list({ channel_type: 'sms' }).toArray(), []);
  // lifted already: 404 naming the resource
  await assert.rejects(
    herald.suppressions.remove('sms', '+15551234567'),
    (e) => e instanceof HeraldApiError && e.status === 404 && e.details.resource === 'suppression',
  );
});

test('errors: an unknown channel type or a malformed address is 422 at its field, a bad filter 400', async () => {
  await assert.rejects(
    herald.suppressions.add({ channel_type: 'push', address: 'x' }),
    (e) => e instanceof HeraldApiError && e.status === 422 && e.details.fields.some((f) => f.field === 'channel_type'),
  );
  await assert.rejects(
    herald.suppressions.add({ channel_type: 'sms', address: '555-1234' }),
    (e) => e.status === 422 && e.details.fields.some((f) => f.field === 'address' && f.reason === 'format'),
  );
  await assert.rejects(
    herald.suppressions.add({ channel_type: 'email', address: 'a@example.com', reason: 'complaint' }),
    (e) => e.status === 422 && e.details.fields.some((f) => f.field === 'reason'),
  );
  await assert.rejects(herald.suppressions.list({ channel_type: 'push' }).page(), (e) => e.status === 400 && e.reason === 'invalid_param' && e.details.param === 'channel_type');
  await assert.rejects(() => herald.suppressions.remove('email', ''), TypeError);
});

test('every method of suppressions was called', () => {
  assert.deepEqual(uncalled(herald, ['suppressions']), []);
});
