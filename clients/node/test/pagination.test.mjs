// Cursor pagination against the real binary: 2,500 notifications (three
// runs to 1,000, 1,000 and 500 recipients) walked with `for await` across
// pages, each once and newest first; one page at a time with next() and
// previous(); filters kept across pages; a list started from a cursor.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHerald, client, activeFlow } from './helpers.mjs';
import { PageList, ITERATION_PAGE_SIZE } from '../dist/index.js';

let server;
let herald;
let flow;
let runIds;
before(async () => {
  server = await startHerald();
  herald = client(server);
  flow = await activeFlow(herald);
  const recipients = (n) => Array.from({ length: n }, (_, i) => ({ external_id: `p-${i}` }));
  runIds = [];
  for (const n of [1000, 1000, 500]) runIds.push((await herald.flows.run(flow.id, { recipients: recipients(n) }, { timeoutMs: 120_000 })).id);
});
after(async () => {
  await server?.stop();
});

test('for await walks 2,500 notifications across pages, each once, newest first', async () => {
  const list = herald.notifications.list({ flow_id: flow.id });
  assert.ok(list instanceof PageList);
  const ids = [];
  let pages = 0;
  for await (const page of list.pages()) {
    pages += 1;
    assert.ok(page.items.length <= ITERATION_PAGE_SIZE);
    for (const n of page.items) ids.push(n.id);
  }
  assert.equal(ids.length, 2500);
  assert.equal(new Set(ids).size, 2500);
  assert.equal(pages, 25);
  // ids are UUIDv7: newest first means descending
  assert.deepEqual([...ids].sort().reverse(), ids);

  let count = 0;
  for await (const n of herald.notifications.list({ flow_id: flow.id, limit: 1000 })) {
    assert.equal(n.flow_id, flow.id);
    count += 1;
  }
  assert.equal(count, 2500);
});

test('a filter holds across pages; the page size is the caller\'s', async () => {
  const lastRun = await herald.notifications.list({ flow_run_id: runIds[2], limit: 64 }).toArray();
  assert.equal(lastRun.length, 500);
  assert.ok(lastRun.every((n) => n.flow_run_id === runIds[2]));
  assert.equal((await herald.notifications.list({ flow_id: flow.id }).toArray(30)).length, 30);
});

test('one page at a time: page(), next(), previous(), and a list started at a cursor', async () => {
  const first = await herald.notifications.list({ flow_id: flow.id, limit: 1000 }).page();
  assert.equal(first.items.length, 1000);
  assert.equal(first.page.limit, 1000);
  assert.equal(first.hasPrevious, false);
  assert.ok(first.hasNext);
  const second = await first.next();
  const third = await second.next();
  assert.equal(third.items.length, 500);
  assert.equal(third.hasNext, false);
  assert.equal(await third.next(), null);
  const back = await third.previous();
  assert.deepEqual(back.items.map((n) => n.id), second.items.map((n) => n.id));

  // iterating from the second page's cursor yields the last 1,500
  const rest = await herald.notifications.list({ flow_id: flow.id, limit: 250, after: first.page.after }).toArray();
  assert.equal(rest.length, 1500);
  assert.equal(rest[0].id, second.items[0].id);
  // and from `before` it walks back towards the newest
  const newer = await herald.notifications.list({ flow_id: flow.id, limit: 400, before: third.page.before }).toArray();
  assert.equal(newer.length, 2000);
  assert.throws(() => herald.notifications.list({ after: 'a', before: 'b' }), TypeError);
});
