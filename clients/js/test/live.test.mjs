// herald-client's live feed against the real herald binary: a run's entry
// arrives on the socket and lands in the store and counts; the user's own
// actions show at once and are confirmed by their frames; another device's
// changes arrive; `reset` (the server's data restored from an older copy)
// refetches; unsubscribe closes the socket; 4408 stops without reconnecting.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Herald, runMany, setup, sleep, startHerald, waitFor } from './helpers.mjs';

let server;
before(async () => {
  server = await startHerald({ extraArgs: ['--max-user-sockets', '3'] });
});
after(async () => {
  await server?.stop();
});

function record(feed) {
  const events = [];
  const states = [];
  const unsubscribe = feed.subscribe((state, event) => {
    events.push(event);
    states.push(state);
  });
  return { events, states, unsubscribe, last: () => states[states.length - 1] };
}

async function sockets() {
  const text = await (await fetch(server.base + '/metrics')).text();
  const m = /^herald_websocket_connections (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

test("a run's entry arrives live: created event, store and unread count", async () => {
  const s = await setup(server);
  await runMany(server, s, 1);
  const feed = s.herald.feed;
  const r = record(feed);
  try {
    await waitFor('live', () => feed.state.connection === 'live');
    await waitFor('the first page', () => feed.state.items.length === 1 && feed.state.meta?.unread_count === 1);
    const before = feed.state.lastSeq;
    await s.run({ title: 'Live one', n: 2 });
    const ev = await waitFor('feed_entry.created', () => r.events.find((e) => e.type === 'feed_entry.created'));
    assert.equal(ev.entry.data.subject, 'Live one');
    assert.equal(ev.seq, before + 1);
    assert.equal(feed.state.items[0].id, ev.entry.id, 'newest first');
    assert.equal(feed.state.items.length, 2);
    assert.deepEqual(feed.state.meta, { unread_count: 2, unseen_count: 2 });
    assert.equal(feed.state.lastSeq, ev.seq);
    assert.equal(r.last().meta.unread_count, 2, 'listeners get the state with the event');
  } finally {
    r.unsubscribe();
  }
});

test('own action: optimistic at once, confirmed by its frame; another device reading shows up too', async () => {
  const s = await setup(server);
  await runMany(server, s, 2);
  const feed = s.herald.feed;
  const r = record(feed);
  try {
    await waitFor('live with 2 entries', () => feed.state.connection === 'live' && feed.state.items.length === 2 && feed.state.meta);
    const [a, b] = feed.state.items;
    const p = feed.markRead(a.id);
    assert.equal(feed.state.items[0].read, true);
    assert.equal(feed.state.meta.unread_count, 1);
    await p;
    const upd = await waitFor('the update frame', () => r.events.find((e) => e.type === 'feed_entry.updated' && e.entry.id === a.id));
    assert.equal(upd.entry.read, true);
    assert.equal(upd.meta.unread_count, 1);
    // the counts never went back up to 2 on the way
    const unread = r.states.map((x) => x.meta?.unread_count).filter((n) => n !== undefined);
    const i = unread.indexOf(1);
    assert.ok(unread.slice(i).every((n) => n === 1), `unread counts after the click: ${unread.slice(i)}`);

    const other = new Herald({ baseUrl: server.base, publicKey: server.keys.publicKey, userId: s.ext });
    await other.feed.archive(b.id);
    await waitFor('the other device archived b', () => feed.state.items.length === 1 && feed.state.meta.unread_count === 0);
    assert.equal(feed.state.items[0].id, a.id);
  } finally {
    r.unsubscribe();
  }
});

/** A WebSocket whose incoming frames reach the client `ms` later (in order): HTTP answers then beat their frames. */
function slowFrames(ms) {
  return class SlowFrames extends WebSocket {
    get onmessage() {
      return super.onmessage;
    }
    set onmessage(fn) {
      super.onmessage = fn && ((ev) => {
        const data = ev.data;
        setTimeout(() => fn({ data }), ms);
      });
    }
  };
}

test('own action answered before its frame: the older counts do not undo it meanwhile', async () => {
  const s = await setup(server, { client: { WebSocket: slowFrames(300) } });
  await runMany(server, s, 2);
  const feed = s.herald.feed;
  const r = record(feed);
  try {
    await waitFor('live with 2 unread', () => feed.state.connection === 'live' && feed.state.meta?.unread_count === 2);
    const [a] = feed.state.items;
    const from = r.states.length;
    await feed.markRead(a.id);
    assert.ok(!r.events.some((e) => e.type === 'feed_entry.updated'), 'the answer came before the frame');
    assert.equal(feed.state.meta.unread_count, 1);
    assert.equal(feed.state.items[0].read, true);
    await waitFor('the update frame', () => r.events.find((e) => e.type === 'feed_entry.updated' && e.entry.id === a.id));
    const unread = r.states.slice(from).map((x) => x.meta.unread_count);
    assert.ok(unread.every((n) => n === 1), `unread counts after the click: ${unread}`);
    assert.deepEqual(feed.state.meta, { unread_count: 1, unseen_count: 1 });
  } finally {
    r.unsubscribe();
  }
});

test('live means in step: once live, lastSeq is the hello\'s seq even when the first page is slow', async () => {
  const slowFeed = async (url, init) => {
    if (String(url).includes('/user/v1/feed?')) await sleep(300);
    return fetch(url, init);
  };
  const s = await setup(server, { client: { fetch: slowFeed } });
  await runMany(server, s, 1);
  const feed = s.herald.feed;
  const r = record(feed);
  try {
    await waitFor('live', () => feed.state.connection === 'live');
    assert.equal(feed.state.lastSeq, 1, 'one event so far: the created entry');
    assert.deepEqual(r.events.filter((e) => e.type === 'connection').map((e) => e.state), ['connecting', 'live']);
  } finally {
    r.unsubscribe();
  }
});

test('markAllRead while live: counts go to 0 and stay there while the per-entry frames arrive', async () => {
  const s = await setup(server);
  await runMany(server, s, 6);
  const feed = s.herald.feed;
  const r = record(feed);
  try {
    await waitFor('live with 6 unread', () => feed.state.connection === 'live' && feed.state.meta?.unread_count === 6);
    const from = r.states.length;
    const res = await feed.markAllRead();
    assert.equal(res.updated, 6);
    await waitFor('6 update frames', () => r.events.filter((e) => e.type === 'feed_entry.updated').length === 6);
    await sleep(100);
    const after = r.states.slice(from).map((x) => x.meta.unread_count);
    assert.ok(after.every((n) => n === 0), `unread counts during read_all: ${after}`);
    assert.ok(feed.state.items.every((e) => e.read));
  } finally {
    r.unsubscribe();
  }
});

test('unsubscribe closes the socket and stops updating the store', async () => {
  const s = await setup(server);
  const feed = s.herald.feed;
  const base = await sockets();
  const r = record(feed);
  await waitFor('live', () => feed.state.connection === 'live');
  assert.equal(await sockets(), base + 1);
  r.unsubscribe();
  assert.equal(feed.state.connection, 'idle');
  await waitFor('the server saw the close', async () => (await sockets()) === base);
  const n = r.events.length;
  await s.run({ title: 'after', n: 1 });
  await sleep(500);
  assert.equal(r.events.length, n, 'no events after unsubscribe');
});

test('4408: the oldest socket of a user over --max-user-sockets is stopped, not reconnected', async () => {
  const s = await setup(server);
  const feeds = [0, 1, 2, 3].map(() => s.herald.createFeed());
  const rs = [];
  try {
    for (const f of feeds) {
      rs.push(record(f));
      await waitFor('live', () => f.state.connection === 'live');
    }
    await waitFor('the first one evicted', () => feeds[0].state.connection === 'evicted');
    const close = rs[0].events.find((e) => e.type === 'connection' && e.state === 'evicted');
    assert.equal(close.code, 4408);
    await sleep(1500); // longer than the test's backoff: it must not come back
    assert.equal(feeds[0].state.connection, 'evicted');
    assert.ok(!rs[0].events.some((e, i) => i > rs[0].events.indexOf(close) && e.type === 'connection' && e.state === 'connecting'));
    for (const f of feeds.slice(1)) assert.equal(f.state.connection, 'live');
  } finally {
    for (const r of rs) r.unsubscribe();
  }
});

test('reset: the server restored from an older copy answers reset, the client refetches and goes on', async () => {
  // a server of its own: this test stops it and swaps its data directory
  const own = await startHerald();
  const backup = mkdtempSync(path.join(tmpdir(), 'herald-backup-'));
  try {
    const s = await setup(own);
    await runMany(own, s, 1);
    await own.kill();
    cpSync(own.dataDir, backup, { recursive: true });
    await own.start();
    for (const n of [2, 3]) await s.run({ title: `T${n}`, n }); // entries 2 and 3 exist only after the copy
    await runMany(own, s, 0, 3);
    const feed = s.herald.feed;
    const r = record(feed);
    try {
      await waitFor('live with 3 entries', () => feed.state.connection === 'live' && feed.state.items.length === 3);
      await s.run({ title: 'T4', n: 4 });
      await waitFor('4 entries', () => feed.state.items.length === 4);
      const seqBefore = feed.state.lastSeq;
      // the server goes down and comes back from the copy: one entry, an older seq
      await own.kill();
      rmSync(own.dataDir, { recursive: true, force: true });
      cpSync(backup, own.dataDir, { recursive: true });
      await own.start();
      const reset = await waitFor('a reset event', () => r.events.find((e) => e.type === 'reset'));
      assert.ok(reset.seq < seqBefore, `reset seq ${reset.seq} vs ${seqBefore}`);
      await waitFor('the store refetched: one entry', () => feed.state.items.length === 1 && feed.state.connection === 'live');
      assert.equal(feed.state.items[0].data.subject, 'T1');
      assert.deepEqual(feed.state.meta, { unread_count: 1, unseen_count: 1 });
      assert.equal(feed.state.lastSeq, reset.seq);
      // and it goes on from there
      await s.run({ title: 'after reset', n: 5 });
      await waitFor('the new entry', () => feed.state.items.length === 2 && feed.state.items[0].data.subject === 'after reset');
      assert.equal(feed.state.lastSeq, reset.seq + 1);
    } finally {
      r.unsubscribe();
    }
  } finally {
    await own.stop();
    rmSync(backup, { recursive: true, force: true });
  }
});
