/// <reference lib="dom" />
import type { Schemas } from '@pipewright/client';
import { type RunningServer, startServer } from '@pipewright/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, seriousViolations } from './helpers/browser.js';
import { RESOURCES } from './helpers/resources.js';

// The organization's accounts and API keys, and the pipelines filtered by the server with the
// filters in the URL, in headless Chromium against the real server program.

const WAIT = { timeout: 30_000 };

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** The paths and queries of the API requests the page made. */
const apiRequests: string[] = [];

beforeAll(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: new URL(server.url).origin,
  });
  page = await context.newPage();
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/v0/')) apiRequests.push(`${url.pathname}${url.search}`);
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function signIn(apiKey: string) {
  await page.getByLabel('API key', { exact: true }).fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key', { exact: true }).waitFor(WAIT);
}

async function openOrganization() {
  await page
    .getByRole('navigation', { name: 'Sections' })
    .getByRole('link', { name: 'Organization' })
    .click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor(WAIT);
}

/** Creates a key in the form (for `account` when given) and returns the key shown once. */
async function createKey(name: string, account?: string): Promise<string> {
  if (account) await page.getByLabel('For account').selectOption({ label: account });
  await page.getByLabel('What it is for').fill(name);
  await page.getByRole('button', { name: 'Create API key' }).click();
  const shown = page.locator('.new-key pre');
  await shown.waitFor(WAIT);
  return ((await shown.textContent()) ?? '').trim();
}

async function confirm(button: string, confirmLabel: string) {
  await page.getByRole('button', { name: button }).click();
  await page.getByRole('dialog').getByRole('button', { name: confirmLabel }).click();
}

const emailAddress = `robot-${process.pid}@example.test`;
let robotKey = '';

describe('organization view', () => {
  it('lets an admin create an account, then a key for it, shown once with a copy button', async () => {
    await page.goto(`${server.url}/organization`);
    await signIn(server.apiKey);
    await openOrganization();
    await page.getByLabel('Email address').fill(emailAddress);
    await page.getByLabel('Display name').fill('CI robot');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('cell', { name: 'CI robot' }).waitFor(WAIT);

    robotKey = await createKey('deployments', emailAddress);
    expect(robotKey).toMatch(/^pwk_[0-9A-Za-z]{27}_[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied.').waitFor(WAIT);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(robotKey);
    const { data: me } = await server.client(undefined, robotKey).GET('/account');
    expect(me).toMatchObject({ email_address: emailAddress, role: 'user', name: 'CI robot' });
    await screenshot(page, 'organization-new-key');
    expect(await seriousViolations(page)).toEqual([]);

    // Once dismissed it is gone for good: the list shows the key's id, never its secret.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('cell', { name: 'deployments', exact: true }).waitFor(WAIT);
    expect(await page.content()).not.toContain(robotKey.slice(32));
  });

  it('lets an admin disable an account, which refuses its keys at once, and enable it again', async () => {
    await confirm(`Disable ${emailAddress}`, 'Disable');
    await page.getByRole('button', { name: `Enable ${emailAddress}` }).waitFor(WAIT);
    await expect(server.client(undefined, robotKey).GET('/account')).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
    await page.getByRole('button', { name: `Enable ${emailAddress}` }).click();
    await page.getByRole('button', { name: `Disable ${emailAddress}` }).waitFor(WAIT);
    const { data: me } = await server.client(undefined, robotKey).GET('/account');
    expect(me?.email_address).toBe(emailAddress);
  });

  it("lets an admin revoke another account's key, which then opens nothing", async () => {
    await confirm('Revoke deployments', 'Revoke');
    await page.getByRole('cell', { name: /^revoked / }).waitFor(WAIT);
    await expect(server.client(undefined, robotKey).GET('/account')).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
    await signOut();
  });

  it('shows a user only its own keys, lets it create one, and revoking its own session key signs it out', async () => {
    const admin = server.client();
    const { data: account } = await admin.POST('/accounts', {
      body: { email_address: `user-${process.pid}@example.test`, role: 'user' },
    });
    const { data: created } = await admin.POST('/api_keys', {
      body: { account_id: account?.id ?? '', name: 'first' },
    });
    await signIn(created?.key ?? '');
    await openOrganization();
    // No account management, no choice of account: its own keys only.
    expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
    expect(await page.getByLabel('For account').count()).toBe(0);
    await page.getByRole('cell', { name: /\(this session\)$/ }).waitFor(WAIT);
    const second = await createKey('laptop');
    const { data: mine } = await server.client(undefined, second).GET('/api_keys');
    expect(mine?.elements.map((k) => k.name).sort()).toEqual(['first', 'laptop']);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Revoke laptop' }).waitFor(WAIT);
    expect(await page.getByRole('button', { name: /^Revoke / }).count()).toBe(2);
    await screenshot(page, 'organization-user');
    expect(await seriousViolations(page)).toEqual([]);

    await confirm('Revoke first', 'Revoke');
    await page.getByLabel('API key', { exact: true }).waitFor(WAIT);
    await expect(server.client(undefined, created?.key).GET('/account')).rejects.toMatchObject({
      status: 401,
    });
    const { data: still } = await server.client(undefined, second).GET('/account');
    expect(still?.id).toBe(account?.id);
  });
});

describe('pipelines view', () => {
  let project: Schemas['Project'];
  let released: string[] = [];
  let checked = '';

  it('filters on the server and keeps the filters in the URL, so that a view can be shared', async () => {
    const admin = server.client();
    const { data } = await admin.POST('/projects', { body: { name: `filters-${process.pid}` } });
    project = data as Schemas['Project'];
    await admin.PUT('/projects/id/{id}/resources', {
      params: { path: { id: project.id } },
      body: { specs: RESOURCES as never[] },
    });
    const client = server.client(project.id);
    const { data: command } = await client.GET('/resources/type/{type}/name/{name}', {
      params: { path: { type: 'command', name: 'deploy' } },
    });
    const { data: execution } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: command?.id ?? '' } },
      body: { parameters: { version: '2.0.0' } },
    });
    released = execution?.pipeline_ids ?? [];
    const [event] =
      (
        await client.POST('/events', {
          body: { connector: 'custom', name: 'push', data: { branch: 'main' } },
        })
      ).data ?? [];
    const { data: pushed } = await client.GET('/pipelines', {
      params: { query: { event_id: event?.id ?? '' } },
    });
    checked = pushed?.elements[0]?.id ?? '';

    await signIn(server.apiKey);
    await page.getByLabel('Project').selectOption(project.name);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Pipelines' }).click();
    await page.getByRole('link', { name: 'check' }).waitFor(WAIT);
    await page.getByLabel('Command').selectOption({ label: 'deploy' });
    await page.waitForURL(/[?&]command=/, WAIT);
    // The list is empty while the filtered one loads: wait for it.
    await expect.poll(() => page.getByRole('link', { name: 'release' }).count(), WAIT).toBe(released.length);
    expect(await page.getByRole('link', { name: 'check' }).count()).toBe(0);
    // The server did the filtering.
    expect(apiRequests.some((r) => r.includes(`command_id=${command?.id}`))).toBe(true);

    const today = new Date();
    const day = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    await page.getByLabel('Created from').fill(day);
    await page.waitForURL(new RegExp(`[?&]since=${day}`), WAIT);
    await page.getByRole('link', { name: 'release' }).first().waitFor(WAIT);
    await screenshot(page, 'pipelines-filtered');
    expect(await seriousViolations(page)).toEqual([]);
    const shared = page.url();

    // The link opened fresh (signed in again: the key is never kept) shows the same view.
    await page.goto(shared);
    await signIn(server.apiKey);
    await page.getByRole('link', { name: 'release' }).first().waitFor(WAIT);
    // The list may come before the commands the filter's menu offers: the menu shows the command
    // once they are in.
    await expect.poll(() => page.getByLabel('Command').inputValue(), WAIT).toBe(command?.id);
    expect(await page.getByLabel('Created from').inputValue()).toBe(day);
    expect(await page.getByRole('link', { name: 'check' }).count()).toBe(0);

    // By name, and by trigger.
    await page.getByLabel('Command').selectOption('');
    await page.getByLabel('Pipeline name').fill('check');
    await page.waitForURL(/[?&]name=check/, WAIT);
    await page.getByRole('link', { name: 'check' }).waitFor(WAIT);
    expect(await page.getByRole('link', { name: 'release' }).count()).toBe(0);
    await page.getByLabel('Pipeline name').fill('');
    await page.getByLabel('Trigger').selectOption({ label: 'on-push' });
    await page.getByRole('link', { name: 'check' }).waitFor(WAIT);
    await page.getByRole('link', { name: 'release' }).waitFor({ state: 'detached', ...WAIT });
    expect(await page.getByText(checked).count()).toBe(1);
  });
});
