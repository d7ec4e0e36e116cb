// The drift check itself: the committed schema matches what openapi-typescript
// makes of the binary's /openapi.json, the operation table covers exactly the
// document's Admin API operations, and the check does fail when the document
// gains an operation or a field, loses one, or disagrees on an
// Idempotency-Key (so a server change the SDK lacks fails CI).

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fetchOpenapi } from '../scripts/herald-server.mjs';
import { SCHEMA_FILE, generate, adminOperations, coverageProblems } from '../scripts/openapi-drift.mjs';

let doc;
before(async () => {
  doc = await fetchOpenapi();
});

const copy = () => structuredClone(doc);

test('the committed schema is what the binary\'s document generates, and the table covers it', async () => {
  assert.equal(await generate(doc), readFileSync(SCHEMA_FILE, 'utf8'));
  assert.deepEqual(await coverageProblems(doc), []);
  assert.ok(adminOperations(doc).size >= 70);
});

test('a new Admin API operation without an SDK method is reported', async () => {
  const d = copy();
  d.paths['/admin/v1/widgets'] = { get: { operationId: 'listWidgets', responses: { 200: { description: 'ok' } } } };
  const problems = await coverageProblems(d);
  assert.equal(problems.length, 1);
  assert.match(problems[0], /GET \/admin\/v1\/widgets \(listWidgets\): no SDK method/);
});

test('an operation the document no longer has, or another Idempotency-Key rule, is reported', async () => {
  const d = copy();
  delete d.paths['/admin/v1/flows/{id}/archive'];
  d.paths['/admin/v1/flows/{id}/run'].post.parameters = d.paths['/admin/v1/flows/{id}/run'].post.parameters.filter((p) => p.name !== 'Idempotency-Key');
  const problems = await coverageProblems(d);
  assert.ok(problems.some((p) => /POST \/admin\/v1\/flows\/\{id\}\/archive \(archiveFlow\): in the SDK's table but not in the document/.test(p)));
  assert.ok(problems.some((p) => /POST \/admin\/v1\/flows\/\{id\}\/run: the document says it does not take an Idempotency-Key/.test(p)));
});

test('a new field changes the generated types, so the committed schema is stale', async () => {
  const d = copy();
  d.components.schemas.User.properties.nickname = { type: ['string', 'null'] };
  const fresh = await generate(d);
  assert.notEqual(fresh, readFileSync(SCHEMA_FILE, 'utf8'));
  assert.match(fresh, /nickname\?: string \| null/);
});
