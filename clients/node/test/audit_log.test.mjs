// The audit log against a real herald: a change made through the SDK is an
// entry by `api` with the resource before and after, newest first, filtered
// by resource type and actor across pages; every method of the namespace is
// called (the last test checks it).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHerald, client, uncalled, hex } from './helpers.mjs';

let server;
let herald;
before(async () => {
  server = await startHerald();
  herald = client(server);
});
after(async () => {
  await server?.stop();
});

test('changes are listed newest first, by api, with before and after', async () => {
  const key = `audit-${hex(4)}`;
  await herald.topics.upsert(key, { name: 'First' });
  await herald.topics.upsert(key, { name: 'Second' });
  await herald.topics.delete(key);
  const mine = [];
  for await (const e of herald.auditLog.list({ resource_type: 'topic', limit: 2 })) {
    if (e.resource_key === key) mine.push(e);
  }
  assert.deepEqual(mine.map((e) => e.action), ['topic.deleted', 'topic.updated', 'topic.created']);
  assert.deepEqual([...new Set(mine.map((e) => e.who))], ['api']);
  assert.equal(mine[1].before.name, 'First');
  assert.equal(mine[1].after.name, 'Second');
  assert.equal(mine[0].after, null);
  const page = await herald.auditLog.list({ who: 'operator' }).page();
  assert.deepEqual(page.items.filter((e) => e.resource_key === key), []);
});

test('every method of auditLog was called', () => {
  assert.deepEqual(uncalled(herald, ['auditLog']), []);
});
