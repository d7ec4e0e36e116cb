// Users, erasures, categories, preference defaults and topics against a real
// herald: every method of those namespaces is called at least once (the last
// test checks it).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHerald, client, uncalled, activeFlow, waitFor, hex } from './helpers.mjs';
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

test('users: upsert creates then updates, get, list, bulk upsert and bulk delete', async () => {
  const created = await herald.users.upsert('ada', { first_name: 'Ada', email: 'ada@example.com' });
  assert.equal(created.external_id, 'ada');
  assert.equal(responseOf(created).status, 201);
  const updated = await herald.users.upsert('ada', { last_name: 'Lovelace', email: null });
  assert.equal(responseOf(updated).status, 200);
  assert.equal(updated.first_name, 'Ada');
  assert.equal(updated.email, null);
  assert.equal((await herald.users.get('ada')).last_name, 'Lovelace');

  const bulk = await herald.users.bulkUpsert([
    { external_id: 'grace', first_name: 'Grace' },
    { external_id: 'bad', email: 'not-an-email' },
  ]);
  assert.equal(bulk.results[0].status, 'created');
  assert.equal(bulk.results[1].error.code, 'validation_failed');
  assert.equal(bulk.results[1].error.details.fields[0].field, 'users.1.email');

  const ids = [];
  for await (const u of herald.users.list({ limit: 1 })) ids.push(u.external_id);
  assert.deepEqual(ids.sort(), ['ada', 'grace']);

  const del = await herald.users.bulkDelete(['grace', 'nobody']);
  assert.equal(del.deleted, 1);
  assert.deepEqual(del.not_found, ['nobody']);
  await assert.rejects(herald.users.get('grace'), (e) => e instanceof HeraldApiError && e.code === 'not_found');
});

test('users: delete, delete with erasure, bulk delete with erasure, erasures.get', async () => {
  await herald.users.upsert('tmp1');
  assert.equal(await herald.users.delete('tmp1'), undefined);

  // a user with notifications, so the erasure has something to remove
  const flow = await activeFlow(herald);
  await herald.users.upsert('eve');
  await herald.flows.run(flow.handle, { recipients: [{ external_id: 'eve' }], data: { n: 1 } });
  const erasure = await herald.users.delete('eve', { erase: true });
  if (erasure !== undefined) {
    // 202: the erasure goes on in the background
    assert.equal(responseOf(erasure).status, 202);
    const done = await waitFor('the erasure to complete', async () => {
      const e = await herald.erasures.get(erasure.id);
      return e.status === 'complete' && e;
    });
    assert.ok(done.completed_at);
  }

  await herald.users.upsert('mallory');
  const bulk = await herald.users.bulkDelete(['mallory'], { erase: true });
  assert.equal(bulk.deleted, 1);
  assert.equal(bulk.erasures.length, 1);
  const e = await herald.erasures.get(bulk.erasures[0].erasure.id);
  assert.equal(e.id, bulk.erasures[0].erasure.id);
  assert.ok(['running', 'complete'].includes(e.status));
});

test('categories and preference defaults', async () => {
  const cat = await herald.categories.upsert('marketing', { name: 'Marketing', description: 'News' });
  assert.equal(cat.handle, 'marketing');
  assert.equal(responseOf(cat).status, 201);
  assert.equal((await herald.categories.upsert('marketing', { name: 'Promotions' })).name, 'Promotions');
  assert.equal((await herald.categories.get('marketing')).name, 'Promotions');
  await herald.categories.upsert('billing', { name: 'Billing' });
  assert.deepEqual((await herald.categories.list()).map((c) => c.handle), ['billing', 'marketing']);

  const defaults = await herald.preferences.updateDefaults({ categories: { marketing: { enabled: false } } });
  assert.equal(defaults.categories.marketing.enabled, false);
  const explained = await herald.preferences.getDefaults({ explain: true });
  assert.equal(explained.explain.categories.marketing.enabled, 'default');

  await herald.categories.delete('billing');
  await assert.rejects(herald.categories.get('billing'), (e) => e.status === 404 && e.details.resource === 'category');
});

test('user preferences, feed and preference link', async () => {
  await herald.users.upsert('bob', { first_name: 'Bob' });
  const prefs = await herald.users.updatePreferences('bob', { channel_types: { email: false } });
  assert.equal(prefs.channel_types.email, false);
  assert.equal(prefs.channel_types.in_app, true);
  const got = await herald.users.getPreferences('bob', { explain: true });
  assert.equal(got.explain.channel_types.email, 'user');

  const flow = await activeFlow(herald);
  for (let n = 1; n <= 3; n++) await herald.flows.run(flow.id, { recipients: [{ external_id: 'bob' }], data: { n } });
  const entries = await waitFor('3 feed entries', async () => {
    const all = await herald.users.feed('bob', { limit: 2 }).toArray();
    return all.length === 3 && all;
  });
  assert.deepEqual(entries.map((e) => e.data.body), ['n=3', 'n=2', 'n=1']);
  const first = await herald.users.feed('bob', { limit: 2 }).page();
  assert.equal(first.body.meta.unread_count, 3);
  assert.equal(first.items.length, 2);
  assert.ok(first.hasNext);

  const link = await herald.users.createPreferenceLink('bob', { expires_in: '1h' });
  assert.match(link.url, /\/p\//);
  assert.ok(link.token && link.expires_at);
});

test('topics: upsert, get, list, subscribe one and many, list subscriptions, unsubscribe, delete', async () => {
  for (const u of ['t1', 't2', 't3']) await herald.users.upsert(u);
  const topic = await herald.topics.upsert('releases', { name: 'Releases' });
  assert.equal(topic.key, 'releases');
  assert.equal((await herald.topics.get('releases')).name, 'Releases');
  await herald.topics.upsert(`other-${hex(2)}`);
  assert.equal((await herald.topics.list().toArray()).length, 2);

  const sub = await herald.topics.subscribe('releases', 't1');
  assert.equal(sub.user_external_id, 't1');
  await assert.rejects(herald.topics.subscribe('releases', 't1'), (e) => e.code === 'conflict' && e.reason === 'subscription_already_exists');
  const many = await herald.topics.subscribeMany('releases', ['t1', 't2', 't3']);
  assert.equal(many.created, 2);
  assert.equal(many.topic.subscribers_count, 3);

  const subs = await herald.topics.listSubscriptions('releases', { limit: 2 }).toArray();
  assert.deepEqual(subs.map((s) => s.user_external_id).sort(), ['t1', 't2', 't3']);
  await herald.topics.unsubscribe('releases', 't2');
  assert.equal((await herald.topics.get('releases')).subscribers_count, 2);
  await herald.topics.delete('releases');
  await assert.rejects(herald.topics.get('releases'), (e) => e.status === 404);
});

test('every method of users, erasures, categories, preferences and topics was called', () => {
  assert.deepEqual(uncalled(herald, ['users', 'erasures', 'categories', 'preferences', 'topics']), []);
});
