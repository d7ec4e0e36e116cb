// herald-client's resume across a server restart, against the real binary: a
// live subscription receives a stream of 1,000 flow runs while the server is
// stopped (SIGTERM: sockets get 1001) and started again after the 400th; every
// entry arrives exactly once, in seq order with no gap, and the store and its
// counts hold all 1,000.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setup, sleep, startHerald, waitFor } from './helpers.mjs';

const RUNS = 1000;
const RESTART_AFTER = 400;

let server;
before(async () => {
  server = await startHerald();
});
after(async () => {
  await server?.stop();
});

test(`${RUNS} runs with a server restart in the middle: each entry once, in seq order`, { timeout: 240_000 }, async (t) => {
  const s = await setup(server);
  const feed = s.herald.feed;
  const created = [];
  const seqs = [];
  const states = [];
  let resets = 0;
  const unsubscribe = feed.subscribe((_, e) => {
    if (e.type === 'feed_entry.created' || e.type === 'feed_entry.updated') seqs.push(e.seq);
    if (e.type === 'feed_entry.created') created.push(e.entry);
    if (e.type === 'reset') resets += 1;
    if (e.type === 'connection') states.push(`${e.state}${e.code ? ':' + e.code : ''}`);
  });
  try {
    await waitFor('live', () => feed.state.connection === 'live');
    const first = feed.state.lastSeq;
    for (let n = 1; n <= RUNS; n++) {
      await s.run({ title: `R${n}`, n });
      if (n === RESTART_AFTER) {
        await server.kill('SIGTERM');
        await sleep(300);
        await server.start();
      }
    }
    await waitFor(`${RUNS} created events`, () => created.length >= RUNS, 180_000);
    await sleep(300); // anything doubled would show up now
    assert.ok(states.includes('offline:1001'), `the restart was seen: ${states.join(' ')}`);
    assert.equal(states[states.length - 1], 'live');
    assert.equal(resets, 0, 'the resume was served from the event log');
    assert.equal(created.length, RUNS, 'no entry twice');
    assert.equal(new Set(created.map((e) => e.id)).size, RUNS);
    const ns = created.map((e) => Number(e.data.body.replace('n=', ''))).sort((a, b) => a - b);
    assert.deepEqual(ns, Array.from({ length: RUNS }, (_, i) => i + 1), 'every run once');
    assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => first + 1 + i), 'seq order, no gap');
    assert.equal(feed.state.items.length, RUNS);
    assert.deepEqual(feed.state.meta, { unread_count: RUNS, unseen_count: RUNS });
    t.diagnostic(`duplicates dropped on resume: ${feed.duplicatesDropped}; connection: ${states.join(' ')}`);
  } finally {
    unsubscribe();
  }
});
