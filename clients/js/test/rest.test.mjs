// herald-client against the real herald binary, REST side: paging both ways,
// every feed action (single, many, all) with its optimistic state, the typed
// HeraldError of each kind of failure, me, preferences, topics and web push.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Herald, HeraldError, hex, runMany, setup, sleep, startHerald, waitFor } from './helpers.mjs';

let server;
before(async () => {
  server = await startHerald();
});
after(async () => {
  await server?.stop();
});

describe('paging', () => {
  test('walks 23 entries with after, then back with before: each exactly once each way, newest first', async () => {
    const s = await setup(server);
    await runMany(server, s, 23);
    const feed = s.herald.feed;
    const forward = [];
    let page = await feed.fetch({ limit: 5 });
    const pages = [page];
    forward.push(...page.items);
    while (page.page.after) {
      page = await feed.fetch({ limit: 5, after: page.page.after });
      pages.push(page);
      forward.push(...page.items);
    }
    assert.equal(pages.length, 5);
    assert.equal(page.page.has_more_after, false);
    assert.equal(forward.length, 23);
    assert.equal(new Set(forward.map((e) => e.id)).size, 23);
    const ids = forward.map((e) => e.id);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    assert.deepEqual(forward.map((e) => e.data.subject).slice(0, 2), ['T23', 'T22']);
    // the store followed: the first page replaced it, every `after` page appended
    assert.deepEqual(feed.state.items.map((e) => e.id), ids);
    assert.equal(feed.state.hasMore, false);
    assert.deepEqual(feed.state.meta, { unread_count: 23, unseen_count: 23 });

    const back = [];
    let cursor = page.page.before;
    while (cursor) {
      const p = await feed.fetch({ limit: 5, before: cursor });
      back.push(...p.items);
      cursor = p.page.before;
    }
    back.unshift(...page.items); // the last forward page is where the walk back starts
    assert.equal(back.length, 23);
    assert.deepEqual(new Set(back.map((e) => e.id)), new Set(ids));
  });

  test('fetchNextPage fills the store page by page (infinite scroll) and stops at the end', async () => {
    const s = await setup(server, { client: {} });
    await runMany(server, s, 12);
    const feed = s.herald.createFeed({ pageSize: 5 });
    await feed.fetch();
    assert.equal(feed.state.items.length, 5);
    assert.equal(feed.state.hasMore, true);
    assert.ok(await feed.fetchNextPage());
    assert.equal(feed.state.items.length, 10);
    assert.ok(await feed.fetchNextPage());
    assert.equal(feed.state.items.length, 12);
    assert.equal(feed.state.hasMore, false);
    assert.equal(await feed.fetchNextPage(), null);
  });

  test('status filters: unread, read, archived', async () => {
    const s = await setup(server);
    await runMany(server, s, 3);
    const feed = s.herald.feed;
    const all = (await feed.fetch()).items;
    await feed.markRead(all[0].id);
    await feed.archive(all[1].id);
    const ids = async (status) => (await feed.fetch({ status })).items.map((e) => e.id);
    assert.deepEqual(await ids('unread'), [all[2].id]);
    assert.deepEqual(await ids('read'), [all[0].id]);
    assert.deepEqual(await ids('archived'), [all[1].id]);
    assert.deepEqual(await ids('all'), [all[0].id, all[2].id]);
  });
});

describe('actions', () => {
  test('single: seen, read, clicked, archive, unarchive return the entry and change the server', async () => {
    const s = await setup(server);
    await runMany(server, s, 1);
    const feed = s.herald.feed;
    const [e] = (await feed.fetch()).items;
    assert.equal(e.seen, false);
    let r = await feed.markSeen(e.id);
    assert.equal(r.seen, true);
    assert.equal(r.read, false);
    r = await feed.markRead(e.id);
    assert.equal(r.read, true);
    assert.ok(r.read_at);
    r = await feed.markClicked(e.id);
    assert.equal(r.clicked, true);
    r = await feed.archive(e.id);
    assert.equal(r.archived, true);
    assert.equal(feed.state.items.length, 0, 'an archived entry leaves the `all` store');
    r = await feed.unarchive(e.id);
    assert.equal(r.archived, false);
    const fresh = await feed.get(e.id);
    assert.deepEqual(
      { seen: fresh.seen, read: fresh.read, clicked: fresh.clicked, archived: fresh.archived },
      { seen: true, read: true, clicked: true, archived: false },
    );
  });

  test('many: markRead([ids]) reads each, counts follow', async () => {
    const s = await setup(server);
    await runMany(server, s, 4);
    const feed = s.herald.feed;
    const items = (await feed.fetch()).items;
    const got = await feed.markRead(items.slice(0, 3).map((e) => e.id));
    assert.equal(got.length, 3);
    assert.ok(got.every((e) => e.read));
    const meta = await waitFor('counts after markRead', async () => {
      const m = await feed.counts();
      return m.unread_count === 1 && m;
    });
    assert.deepEqual(meta, { unread_count: 1, unseen_count: 1 });
    assert.deepEqual(feed.state.meta, meta);
  });

  test('all: markAllSeen, markAllRead, archiveAll', async () => {
    const s = await setup(server);
    await runMany(server, s, 5);
    const feed = s.herald.feed;
    await feed.fetch();
    let r = await feed.markAllSeen();
    assert.equal(r.updated, 5);
    assert.deepEqual(r.meta, { unread_count: 5, unseen_count: 0 });
    r = await feed.markAllRead();
    assert.equal(r.updated, 5);
    assert.deepEqual(r.meta, { unread_count: 0, unseen_count: 0 });
    assert.ok(feed.state.items.every((e) => e.read && e.seen));
    assert.deepEqual(feed.state.meta, { unread_count: 0, unseen_count: 0 });
    assert.equal(await feed.archiveAll(), 5);
    assert.equal((await feed.fetch({ status: 'archived' })).items.length, 5);
    assert.equal((await feed.fetch()).items.length, 0);
    assert.equal(await feed.archiveAll(), 0, 'nothing left to archive');
  });

  test('a category store (a tab), archiveAll of one category, interact with an action button', async () => {
    const s = await setup(server);
    const billing = await server.admin.categoryFlow('billing', [{ label: 'Pay', url: 'https://example.com/pay/{{ data.n }}' }]);
    const runBilling = (n) => server.admin.run(billing.id, s.ext, { title: `B${n}`, n });
    await runMany(server, s, 2);
    await runBilling(1);
    await runBilling(2);
    await waitFor('4 entries', async () => (await s.herald.feed.fetch()).items.length === 4);
    const tab = s.herald.createFeed({ category: 'billing' });
    await tab.fetch();
    assert.deepEqual(tab.state.items.map((e) => e.data.subject), ['B2', 'B1']);
    // live: a new billing entry reaches the tab, another flow's does not
    tab.subscribe(() => {});
    await waitFor('tab live', () => tab.state.connection === 'live');
    await runBilling(3);
    await s.run({ title: 'T3', n: 3 });
    await waitFor('B3 in the tab', () => tab.state.items.some((e) => e.data.subject === 'B3'));
    await waitFor('the main feed has 6', async () => (await s.herald.feed.fetch()).items.length === 6);
    await sleep(200);
    assert.deepEqual(tab.state.items.map((e) => e.data.subject), ['B3', 'B2', 'B1']);
    // the tab's badge: the counts per category follow the events live
    await waitFor('billing badge 3', () => tab.state.byCategory?.billing?.unread_count === 3);
    assert.deepEqual(tab.state.byCategory, { billing: { unread_count: 3, unseen_count: 3 } });
    assert.equal(tab.state.meta.unread_count, 6, 'the totals are the whole feed\'s');
    // a press of the action reads the entry and records which action
    const b3 = tab.state.items[0];
    assert.deepEqual(b3.data.actions, [{ label: 'Pay', url: 'https://example.com/pay/3' }]);
    const pressed = await tab.interact(b3.id, 0);
    assert.equal(pressed.interacted_action, 0);
    assert.equal(pressed.read, true);
    await assert.rejects(tab.interact(b3.id, 1), (e) => e instanceof HeraldError && e.status === 422);
    await waitFor('billing badge 2', () => tab.state.byCategory?.billing?.unread_count === 2);
    // archiveAll of the tab archives the billing entries only
    assert.equal(await tab.archiveAll(), 3);
    await waitFor('the tab is empty', () => tab.state.items.length === 0);
    await waitFor('billing badge 0', () => tab.state.byCategory?.billing?.unread_count === 0);
    const left = (await s.herald.feed.fetch()).items.map((e) => e.data.subject);
    assert.deepEqual(left, ['T3', 'T2', 'T1']);
    tab.unsubscribeAll();
  });

  test('optimistic: the store shows a read before the server answers', async () => {
    const s = await setup(server);
    await runMany(server, s, 2);
    const feed = s.herald.feed;
    const items = (await feed.fetch()).items;
    assert.deepEqual(feed.state.meta, { unread_count: 2, unseen_count: 2 });
    const p = feed.markRead(items[0].id);
    // synchronously after the call: no response can have arrived yet
    assert.equal(feed.state.items[0].read, true);
    assert.deepEqual(feed.state.meta, { unread_count: 1, unseen_count: 1 });
    await p;
    await waitFor('counts settle', () => feed.state.meta.unread_count === 1 && feed.state.items[0].read);
  });

  test('markUnread on a read entry: 409 invalid_transition as a HeraldError, and the optimistic change rolls back', async () => {
    const s = await setup(server);
    await runMany(server, s, 1);
    const feed = s.herald.feed;
    const [e] = (await feed.fetch()).items;
    await feed.markRead(e.id);
    await waitFor('read in the store', () => feed.state.items[0].read);
    const seen = [];
    const p = feed.markUnread(e.id);
    seen.push(feed.state.items[0].read); // optimistic: unread
    const err = await p.catch((x) => x);
    assert.ok(err instanceof HeraldError, String(err));
    assert.equal(err.code, 'conflict');
    assert.equal(err.status, 409);
    assert.equal(err.reason, 'invalid_transition');
    assert.equal(err.details.current_status, 'read');
    assert.deepEqual(err.details.allowed_transitions, []);
    assert.ok(err.requestId);
    assert.deepEqual(seen, [false]);
    assert.equal(feed.state.items[0].read, true, 'rolled back');
    assert.deepEqual(feed.state.meta, { unread_count: 0, unseen_count: 0 });
  });
});

describe('errors', () => {
  test('404 not_found names the resource; 400 invalid_uuid names the param', async () => {
    const s = await setup(server);
    const missing = '01900000-0000-7000-8000-000000000000';
    let err = await s.herald.feed.markRead(missing).catch((x) => x);
    assert.ok(err instanceof HeraldError);
    assert.equal(err.code, 'not_found');
    assert.equal(err.status, 404);
    assert.equal(err.details.resource, 'feed_entry');
    assert.equal(err.type, 'https://herald.dev/errors#not_found-404');
    assert.match(err.requestId, /.+/);
    err = await s.herald.feed.get('not-a-uuid').catch((x) => x);
    assert.equal(err.code, 'bad_request');
    assert.equal(err.reason, 'invalid_uuid');
    assert.equal(err.details.param, 'id');
  });

  test('400 invalid_param for a bad cursor', async () => {
    const s = await setup(server);
    const err = await s.herald.feed.fetch({ after: 'garbage' }).catch((x) => x);
    assert.equal(err.code, 'bad_request');
    assert.equal(err.details.param, 'after');
  });

  test('401: unknown api key, unknown user', async () => {
    let h = new Herald({ baseUrl: server.base, publicKey: `pk_test_${hex(16)}`, userId: 'x' });
    let err = await h.me().catch((x) => x);
    assert.equal(err.code, 'unauthenticated');
    assert.equal(err.status, 401);
    assert.equal(err.reason, 'invalid_api_key');
    h = new Herald({ baseUrl: server.base, publicKey: server.keys.publicKey, userId: `nobody-${hex(4)}` });
    err = await h.me().catch((x) => x);
    assert.equal(err.reason, 'user_not_found');
    assert.equal(err.details.auth, 'user_key_jwt');
  });

  test('422 validation_failed lists the fields', async () => {
    const s = await setup(server);
    const err = await s.herald.setPreferences({ channel_types: { carrier_pigeon: false } }).catch((x) => x);
    assert.equal(err.code, 'validation_failed');
    assert.equal(err.status, 422);
    assert.ok(Array.isArray(err.details.fields) && err.details.fields.length >= 1, JSON.stringify(err.details));
  });

  test('no server: network_error with status 0', async () => {
    const h = new Herald({ baseUrl: 'http://127.0.0.1:1', publicKey: server.keys.publicKey, userId: 'x' });
    const err = await h.me().catch((x) => x);
    assert.ok(err instanceof HeraldError);
    assert.equal(err.code, 'network_error');
    assert.equal(err.status, 0);
  });

  test('the constructor refuses missing options', () => {
    assert.throws(() => new Herald({ baseUrl: server.base, publicKey: 'pk' }), /userToken or userId/);
    assert.throws(() => new Herald({ publicKey: 'pk', userId: 'x' }), /baseUrl/);
  });
});

describe('me, preferences, topics, web push', () => {
  test('me and updateMe', async () => {
    const s = await setup(server);
    const me = await s.herald.me();
    assert.equal(me.external_id, s.ext);
    assert.equal(me.first_name, 'Ada');
    const up = await s.herald.updateMe({ last_name: 'Lovelace', locale: 'en-GB' });
    assert.equal(up.last_name, 'Lovelace');
    assert.equal((await s.herald.me()).locale, 'en-GB');
  });

  test('preferences get and put (partial)', async () => {
    const s = await setup(server);
    const p = await s.herald.getPreferences();
    assert.equal(p.channel_types.email, true);
    assert.ok(p.flows[s.flow.handle], JSON.stringify(p));
    const q = await s.herald.setPreferences({ channel_types: { email: false }, flows: { [s.flow.handle]: { enabled: false } } });
    assert.equal(q.channel_types.email, false);
    assert.equal(q.channel_types.sms, true);
    assert.equal(q.flows[s.flow.handle].enabled, false);
    assert.equal((await s.herald.getPreferences()).flows[s.flow.handle].enabled, false);
  });

  test('topic subscriptions: subscribe, list, unsubscribe', async () => {
    const s = await setup(server);
    const key = `t-${hex(4)}`;
    await server.admin.call('PUT', `/topics/${key}`, { name: 'News' });
    const sub = await s.herald.subscribeToTopic(key);
    assert.equal(sub.topic, key);
    assert.deepEqual((await s.herald.topicSubscriptions()).items.map((x) => x.topic), [key]);
    const again = await s.herald.subscribeToTopic(key).catch((x) => x);
    assert.equal(again.code, 'conflict');
    await s.herald.unsubscribeFromTopic(key);
    assert.equal((await s.herald.topicSubscriptions()).items.length, 0);
  });

  test("registerWebPush subscribes with the channel's VAPID key and registers the endpoint; unregister removes it", async () => {
    const s = await setup(server);
    const ch = await server.admin.call('POST', '/channels', { type: 'web_push', provider: 'web_push', name: 'Browser push', config: { subject: 'mailto:ops@example.com' } });
    const vapid = (await s.herald.channel(ch.id)).vapid_public_key;
    assert.match(vapid, /^[A-Za-z0-9_-]{80,}$/);
    // A ServiceWorkerRegistration's pushManager as a browser has it: node has none,
    // so this stand-in records what it was given and returns a subscription.
    const endpoint = `https://push.example.test/send/${hex(8)}`;
    let current = null;
    let subscribeArgs = null;
    const registration = {
      pushManager: {
        getSubscription: async () => current,
        subscribe: async (o) => {
          subscribeArgs = o;
          current = {
            endpoint,
            toJSON: () => ({ endpoint, keys: { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' } }),
            unsubscribe: async () => {
              current = null;
              return true;
            },
          };
          return current;
        },
      },
    };
    const sub = await s.herald.registerWebPush(registration, ch.id);
    assert.equal(sub.identifier, endpoint);
    assert.equal(subscribeArgs.userVisibleOnly, true);
    assert.equal(Buffer.from(subscribeArgs.applicationServerKey).toString('base64url'), vapid, 'the VAPID key, decoded');
    assert.equal(subscribeArgs.applicationServerKey.length, 65, 'an uncompressed P-256 point');
    assert.deepEqual((await s.herald.pushSubscriptions(ch.id)).items.map((x) => x.identifier), [endpoint]);
    assert.equal(await s.herald.unregisterWebPush(registration, ch.id), true);
    assert.equal(current, null);
    assert.equal((await s.herald.pushSubscriptions(ch.id)).items.length, 0);
    assert.equal(await s.herald.unregisterWebPush(registration, ch.id), false);
  });
});
