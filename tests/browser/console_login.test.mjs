// Browser test of the console's sign-in in headless Chromium (playwright-
// core): the operator adds an owner with `herald console add-member` (through
// the running server's operator API), the link sets the password, then the
// member signs in on /console/login by the labelled Email and Password fields
// and the Sign in button, lands on /console, and signs out with the layout's
// Sign out button; afterwards /console pages redirect to the sign-in page
// again. A wrong password shows the one generic message. The owner invites a
// viewer and an editor from Settings → Members (the link shown once); an
// Admin API change from the page without the CSRF token is 403; the viewer
// signs in through their link and the server refuses their change (403,
// nothing stored), while their pages offer no change at all. The editor
// changes the settings, is offered no key rotation and is refused one by the
// server. Past five failed sign-ins for the account, even the right password
// is answered 429 with the wait. No request of the pages leaves the server's
// origin. axe-core finds no serious or critical violation on the sign-in,
// link, members and settings pages.
//
//   node tests/browser/console_login.test.mjs
//
// Binary from HERALD_BIN (default target/debug/herald; it builds nothing).
// Screenshots land in tests/browser/artifacts/.
// Prints `N passed, N failed` last; exit code 0 when everything passed.

import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnHerald, hex } from '../../clients/js/scripts/herald-server.mjs';
import {
  ARTIFACTS, STEP_TIMEOUT, addMember, assertSameOrigin, axe, finish, launch, log, runTests, step,
} from './console_harness.mjs';

const TEST_TIMEOUT = 120_000;
const EMAIL = 'owner@example.com';
const PASSWORD = 'correct horse battery staple';

/** Opens a one-time link, sets the password and lands on /console. */
async function setPasswordVia(page, link) {
  await page.goto(link);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await Promise.all([
    page.waitForURL((u) => new URL(u).pathname === '/console'),
    page.getByRole('button', { name: 'Set password and sign in' }).click(),
  ]);
}

async function loginTest() {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const server = spawnHerald(dataDir, keys, '127.0.0.1:0');
  let context = null;
  const pageErrors = [];
  try {
    const base = await step('herald serve prints its address', () => server.address);
    const link = await step('herald console add-member prints a sign-in link', () => {
      const l = addMember(dataDir, EMAIL, 'owner');
      if (!l.startsWith(`${base}/console/invite/`)) throw new Error('the link: ' + l);
      return l;
    });

    context = await step('launch headless Chromium', () =>
      launch(profile, { viewport: { width: 900, height: 800 } }),
    );
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT);
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    const urls = [];
    page.on('request', (r) => urls.push(r.url()));

    await step('the link sets the password and signs in', async () => {
      const res = await page.goto(link);
      if (res.status() !== 200) throw new Error(`status ${res.status()}`);
      await page.getByText(EMAIL).first().waitFor();
      await axe(page, 'the sign-in link');
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Password again').fill(PASSWORD);
      await Promise.all([
        page.waitForURL((u) => new URL(u).pathname === '/console'),
        page.getByRole('button', { name: 'Set password and sign in' }).click(),
      ]);
    });

    await step('/console pages redirect to the sign-in page without a session', async () => {
      await context.clearCookies();
      await page.goto(`${base}/console/settings/members`);
      if (new URL(page.url()).pathname !== '/console/login') throw new Error('at ' + page.url());
      const cookies = await context.cookies();
      if (cookies.some((c) => c.name === 'herald_console')) throw new Error('a cookie is left');
      await axe(page, 'the sign-in page');
    });

    await step('a wrong password shows the generic message', async () => {
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill('not the password at all');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
      await page.getByText('Email or password is incorrect.').waitFor();
      await axe(page, 'a failed sign-in');
    });

    await step('Email, Password, Sign in: lands on /console with an HttpOnly cookie', async () => {
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([
        page.waitForURL((u) => new URL(u).pathname === '/console'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      const c = (await context.cookies()).find((x) => x.name === 'herald_console');
      if (!c || !c.httpOnly || c.sameSite !== 'Lax') throw new Error('the cookie: ' + JSON.stringify(c));
    });

    let viewerLink = '';
    let editorLink = '';
    await step('an owner invites a viewer from Settings → Members: the link shown once', async () => {
      await page.goto(`${base}/console/settings/members`);
      await page.getByLabel('Email').fill('viewer@example.com');
      await page.getByLabel('Role', { exact: true }).selectOption('viewer');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Invite' }).click()]);
      viewerLink = await page.getByRole('textbox', { name: 'Sign-in link' }).inputValue();
      if (!viewerLink.startsWith(`${base}/console/invite/`)) throw new Error('the link: ' + viewerLink);
      await page.getByText('invited (no password yet)').waitFor();
      await axe(page, 'Members');
      // and an editor, the same way
      await page.getByLabel('Email').fill('editor@example.com');
      await page.getByLabel('Role', { exact: true }).selectOption('editor');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Invite' }).click()]);
      editorLink = await page.getByRole('textbox', { name: 'Sign-in link' }).inputValue();
      if (!editorLink.startsWith(`${base}/console/invite/`)) throw new Error('the link: ' + editorLink);
    });

    await step('a change without the CSRF token is refused (403), with it accepted', async () => {
      const statuses = await page.evaluate(async () => {
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const body = JSON.stringify({ timezone: 'Europe/Paris' });
        const headers = { 'content-type': 'application/json' };
        const without = await fetch('/admin/v1/project', { method: 'PUT', headers, body, credentials: 'same-origin' });
        const withIt = await fetch('/admin/v1/project', {
          method: 'PUT', headers: { ...headers, 'x-csrf-token': token }, body, credentials: 'same-origin',
        });
        return [without.status, (await without.json()).error.code, withIt.status];
      });
      if (statuses.join() !== '403,forbidden,200') throw new Error('statuses: ' + statuses.join());
    });

    await step('Sign out ends the session', async () => {
      // The overview page (another part of the console) may not have the
      // layout yet: Settings → Members does.
      if ((await page.getByRole('button', { name: 'Sign out' }).count()) === 0) {
        await page.goto(`${base}/console/settings/members`);
      }
      await page.getByText(EMAIL).first().waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'console-signed-in.png'), fullPage: true });
      await Promise.all([
        page.waitForURL((u) => new URL(u).pathname === '/console/login'),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      await page.goto(`${base}/console/settings/members`);
      if (new URL(page.url()).pathname !== '/console/login') throw new Error('still signed in: ' + page.url());
    });

    await step('the viewer signs in through their link; the server refuses their change', async () => {
      await setPasswordVia(page, viewerLink);
      await page.goto(`${base}/console/settings`);
      // the page offers a viewer no change: the fields read-only, no buttons
      await page.getByText('You are a viewer').waitFor();
      if (!(await page.getByLabel(/^Timezone/).isDisabled())) throw new Error('the viewer can edit the timezone');
      for (const name of ['Save settings', 'Use a test clock', 'Rotate the secret key', 'Rotate the link secret']) {
        if (await page.getByRole('button', { name }).count()) throw new Error(`a viewer is offered ${name}`);
      }
      // the server refuses the change all the same
      const r = await page.evaluate(async () => {
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const res = await fetch('/admin/v1/project', {
          method: 'PUT', credentials: 'same-origin',
          headers: { 'content-type': 'application/json', 'x-csrf-token': token },
          body: JSON.stringify({ timezone: 'Asia/Tokyo' }),
        });
        const project = await (await fetch('/admin/v1/project', { headers: { 'x-csrf-token': token } })).json();
        return [res.status, (await res.json()).error.code, project.timezone];
      });
      if (r.join() !== '403,forbidden,Europe/Paris') throw new Error('viewer: ' + r.join());
      await axe(page, "a viewer's Settings");
    });

    await step('each page offers the viewer nothing to change', async () => {
      const offers = { '/console/flows': 'New flow', '/console/topics': 'Create topic', '/console/endpoints': 'Add endpoint' };
      for (const [at, name] of Object.entries(offers)) {
        await page.goto(`${base}${at}`);
        await page.getByText('You are a viewer').waitFor();
        if (await page.getByRole('button', { name }).count()) throw new Error(`a viewer is offered ${name} at ${at}`);
      }
    });

    await step('an editor changes the settings but is offered no key, and the server refuses one', async () => {
      await Promise.all([
        page.waitForURL((u) => new URL(u).pathname === '/console/login'),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      await setPasswordVia(page, editorLink);
      await page.goto(`${base}/console/settings`);
      if (await page.getByText('You are a viewer').count()) throw new Error('an editor is told they are a viewer');
      for (const name of ['Rotate the secret key', 'Rotate the link secret']) {
        if (await page.getByRole('button', { name }).count()) throw new Error(`an editor is offered ${name}`);
      }
      await page.getByLabel(/^Timezone/).fill('America/New_York');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.locator('#settings-message', { hasText: 'Saved.' }).waitFor();
      await axe(page, "an editor's Settings");
      const r = await page.evaluate(async () => {
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const res = await fetch('/admin/v1/project/rotate_secret', {
          method: 'POST', credentials: 'same-origin',
          headers: { 'content-type': 'application/json', 'x-csrf-token': token }, body: '{}',
        });
        return [res.status, (await res.json()).error.code];
      });
      if (r.join() !== '403,forbidden') throw new Error('editor rotating the key: ' + r.join());
      // the page of members is an owner's
      const members = await page.goto(`${base}/console/settings/members`);
      if (members.status() !== 403) throw new Error(`members page for an editor: ${members.status()}`);
      await page.goto(`${base}/console/settings`);
    });

    await step('failed sign-ins are rate limited: past five, even the right password waits', async () => {
      await Promise.all([
        page.waitForURL((u) => new URL(u).pathname === '/console/login'),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      // five wrong passwords use the account's budget (with the one tried
      // above, the last of them may already be refused as too many)
      for (let i = 0; i < 5; i++) {
        await page.getByLabel('Email').fill(EMAIL);
        await page.getByLabel('Password').fill(`wrong password number ${i}`);
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
        await page.getByText(i < 4 ? 'Email or password is incorrect.' : /Email or password is incorrect\.|Too many failed sign-ins/).waitFor();
      }
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      const [res] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === '/console/login' && r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      if (res.status() !== 429 || !res.headers()['retry-after']) throw new Error(`status ${res.status()}, Retry-After ${res.headers()['retry-after']}`);
      await page.getByText(/Too many failed sign-ins\. Try again in \d+ seconds\./).waitFor();
      await axe(page, 'a rate-limited sign-in');
      await page.screenshot({ path: path.join(ARTIFACTS, 'console-rate-limited.png'), fullPage: true });
      if (new URL(page.url()).pathname === '/console') throw new Error('signed in past the limit');
    });

    await step('no request left the server\'s origin', async () => {
      assertSameOrigin(urls, base);
    });
    if (pageErrors.length) throw new Error('errors in the page:\n' + pageErrors.join('\n'));
  } catch (e) {
    log('  server output (tail):\n' + server.output.slice(-20).map((l) => '    ' + l).join('\n'));
    throw e;
  } finally {
    await finish(context, server, [dataDir, profile]);
  }
}

// ------------------------------------------------------------------ runner

await runTests([['console: set the password, sign in by Email and Password, invite a viewer and an editor, CSRF and role refusals, rate limits, sign out', loginTest]], TEST_TIMEOUT);
