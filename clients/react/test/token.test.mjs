// Browser tests of herald-react with user tokens (production mode): security
// mode on, an RS256 JWT signed here with the project's generated key. The
// bell goes live and counts a run, preferences save under the token; a bare
// user id is refused and the bell shows the socket as unauthorized.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSign } from 'node:crypto';
import { axe, newPage, setupWorld } from './helpers.mjs';

const T = { timeout: 60_000 };
let w;
let privateKey;
const errors = [];

function jwt(sub, expInSeconds = 3600) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ sub, exp: Math.floor(Date.now() / 1000) + expInSeconds })}`;
  const sig = createSign('RSA-SHA256').update(body).sign(privateKey).toString('base64url');
  return `${body}.${sig}`;
}

before(async () => {
  w = await setupWorld();
  privateKey = (await w.herald.admin.call('POST', '/project/signing_key')).private_key;
  await w.herald.admin.call('PUT', '/project', { security_mode: true });
}, { timeout: 90_000 });

after(async () => {
  await w?.stop();
}, { timeout: 60_000 });

const tokenUrl = () =>
  `${w.example.url}/?api_key=${encodeURIComponent(w.herald.keys.publicKey)}&user_token=${encodeURIComponent(jwt(w.ext))}`;

test('with a user token the bell goes live and counts a run', T, async () => {
  const page = await newPage(w.browser, errors);
  try {
    await page.goto(tokenUrl());
    await page.waitForSelector('.herald-bell[data-connection="live"]');
    await w.run({ title: 'Signed in', n: 1 });
    await page.waitForFunction(() => document.querySelector('.herald-bell__badge')?.textContent === '1');
    assert.equal(await page.locator('.herald-bell__button').getAttribute('aria-label'), 'Notifications, 1 unread');
    // the request carried the token, not a user id
    const req = page.waitForRequest((r) => r.url().endsWith('/user/v1/preferences') && r.method() === 'PUT');
    await page.getByRole('switch', { name: 'SMS', exact: true }).click();
    const headers = (await req).headers();
    assert.ok(headers['x-service-user-key'], 'no user token on the request');
    assert.equal(headers['x-service-user-id'], undefined);
    await page.waitForFunction(() => document.querySelector('.herald-preferences__saved')?.textContent === '');
    const prefs = await w.herald.admin.call('GET', `/users/${encodeURIComponent(w.ext)}/preferences`);
    assert.equal(prefs.channel_types.sms, false);
    const r = await axe(page);
    assert.deepEqual(r.bad, []);
  } finally {
    await page.close();
  }
});

test('with security mode on, a bare user id is refused: the bell shows unauthorized', T, async () => {
  const page = await newPage(w.browser, []); // its 401s are expected console errors
  try {
    await page.goto(w.url());
    await page.waitForSelector('.herald-bell[data-connection="unauthorized"]');
    assert.equal(await page.locator('.herald-bell__badge').count(), 0);
    await page.waitForSelector('.herald-preferences__status:has-text("Could not load preferences")');
  } finally {
    await page.close();
  }
});

test('no page error or console error with a valid token', () => {
  assert.deepEqual(errors, []);
});
