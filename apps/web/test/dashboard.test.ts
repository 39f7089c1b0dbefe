/// <reference lib="dom" />
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getScratchpadEntry, type Schemas } from '@pipewright/client';
import { type RunningServer, startServer } from '@pipewright/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, seriousViolations } from './helpers/browser.js';
import { RESOURCES } from './helpers/resources.js';

// The dashboard as a person uses it, in headless Chromium against the real server program:
// one story, in order, each step starting where the one before left the page. The API key
// lives in the page's memory only, so the story never reloads the page once signed in.

const WAIT = { timeout: 30_000 };

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let project: Schemas['Project'];
let firstPipelineId = '';
let failedPipelineId = '';
/** What the page must never do: load from elsewhere, break its CSP, throw. */
const problems: string[] = [];
/** The paths of the API requests the page made. */
const apiRequests: string[] = [];

const marker = (name: string) => join(tmpdir(), `pipewright-web-${process.pid}-${Date.now()}-${name}`);

beforeAll(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  const origin = new URL(server.url).origin;
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
    problems.push(`request to ${url}`);
    return route.abort();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) {
      problems.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/v0/')) apiRequests.push(pathname);
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Waits until the graph shows `count` tasks, all in `status`. */
async function graphAll(status: string, count: number) {
  await page.waitForFunction(
    ([wanted, n]) => {
      const nodes = [...document.querySelectorAll('.task-graph [data-status]')];
      return nodes.length === n && nodes.every((node) => node.getAttribute('data-status') === wanted);
    },
    [status, count] as const,
    WAIT,
  );
}

async function expectAccessible(name: string) {
  await screenshot(page, name);
  expect(await seriousViolations(page), name).toEqual([]);
}

async function goToSection(name: string) {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1 }).first().waitFor(WAIT);
}

async function signIn(apiKey: string) {
  await page.getByLabel('API key', { exact: true }).fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
}

async function executeDeploy(fields: { version: string; environment?: string; failOnce?: string }) {
  await goToSection('Commands');
  await page.getByRole('link', { name: 'deploy' }).click();
  await page.getByLabel('version (required)').fill(fields.version);
  if (fields.environment) await page.getByLabel('environment').selectOption(fields.environment);
  if (fields.failOnce) {
    await page.getByLabel('fail_once').check();
    await page.getByLabel('marker').fill(fields.failOnce);
  }
  await page.getByRole('button', { name: 'Execute deploy' }).click();
  await page.waitForURL(/\/pipelines\/[0-9A-Za-z]{27}$/, WAIT);
  return page.url().split('/').at(-1) ?? '';
}

describe('web dashboard', () => {
  it('serves the app with a strict Content-Security-Policy and asks for a key', async () => {
    const response = await page.goto(`${server.url}/`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    await page.getByLabel('API key', { exact: true }).waitFor(WAIT);
    await expectAccessible('sign-in');
  });

  it('refuses a wrong key with the API error', async () => {
    await page.getByLabel('API key', { exact: true }).fill(`pwk_${'0'.repeat(27)}_${'a'.repeat(43)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor(WAIT);
    expect(await page.getByRole('alert').textContent()).toContain('invalid_api_key');
  });

  it('signs in with an API key held in memory only: no storage, cookie or URL has it', async () => {
    const { data } = await server.client().POST('/projects', { body: { name: `web-shop-${process.pid}` } });
    project = data as Schemas['Project'];
    await server.client().PUT('/projects/id/{id}/resources', {
      params: { path: { id: project.id } },
      body: { specs: RESOURCES as never[] },
    });
    await signIn(server.apiKey);
    await page.getByRole('link', { name: project.name }).waitFor(WAIT);
    const stored = await page.evaluate(async () => ({
      local: { ...localStorage },
      session: { ...sessionStorage },
      cookie: document.cookie,
      databases: (await indexedDB.databases()).map((db) => db.name),
      url: location.href,
      html: document.documentElement.outerHTML,
    }));
    expect(stored.local).toEqual({});
    expect(stored.session).toEqual({});
    expect(stored.cookie).toBe('');
    expect(stored.databases).toEqual([]);
    expect(stored.url).not.toContain(server.apiKey);
    expect(stored.html).not.toContain(server.apiKey);
    expect(await context.cookies()).toEqual([]);
    await expectAccessible('projects');
  });

  it('switches to the project and shows its home', async () => {
    await page.getByLabel('Project').selectOption(project.name);
    await page.getByRole('heading', { name: 'Failed recently' }).waitFor(WAIT);
    await page.getByText('No failed pipeline.').waitFor(WAIT);
  });

  it('executes a command from its form, then the graph turns green live', async () => {
    firstPipelineId = await executeDeploy({ version: '1.4.0', environment: 'production' });
    await graphAll('successful', 4);
    // Told by the project's stream of changes, which the page follows.
    expect(apiRequests).toContain('/v0/changes');
    const { data: pipeline } = await server
      .client(project.id)
      .GET('/pipelines/id/{id}', { params: { path: { id: firstPipelineId } } });
    expect(pipeline?.status).toBe('successful');
    // The parameters the form sent, as the command execution's event shows them.
    await page.getByText('"version": "1.4.0"').waitFor(WAIT);
    await page.getByText('"environment": "production"').waitFor(WAIT);
    await expectAccessible('pipeline');
    await screenshot(page, 'dashboard', { width: 1280, height: 760 });
  });

  it('shows a failed step with its coloured output, searchable and downloadable', async () => {
    failedPipelineId = await executeDeploy({ version: '1.5.0', failOnce: marker('first') });
    await page.locator('.task-graph [data-status="failed"]').first().waitFor(WAIT);
    await page.locator('.task-graph [data-status="failed"]').first().click();
    await page.getByRole('heading', { name: /^Task test/ }).waitFor(WAIT);
    const failure = page.locator('pre.output .ansi-red-fg', { hasText: 'FAIL: flaky test' });
    await failure.waitFor(WAIT);
    await page.getByLabel('Search the output').fill('flaky');
    await page.getByText('1 match', { exact: true }).waitFor(WAIT);
    expect(await page.locator('pre.output mark').first().textContent()).toBe('flaky');
    const [download] = await Promise.all([
      page.waitForEvent('download', WAIT),
      page.getByRole('button', { name: /Download the output of Step 2: Run the tests/ }).click(),
    ]);
    const text = await readFile((await download.path()) ?? '', 'utf8');
    expect(text).toContain('FAIL: flaky test');
    await expectAccessible('task');
  });

  it('restarts the pipeline from failure after a confirmation, and it succeeds', async () => {
    await page.getByRole('link', { name: failedPipelineId }).click();
    await page.locator('.task-graph [data-status="failed"]').first().waitFor(WAIT);
    await page.getByRole('button', { name: 'Restart from failure' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor(WAIT);
    await dialog.getByRole('button', { name: 'Restart from failure' }).click();
    await graphAll('successful', 4);
    const { data: pipeline } = await server
      .client(project.id)
      .GET('/pipelines/id/{id}', { params: { path: { id: failedPipelineId } } });
    expect(pipeline?.status).toBe('successful');
  });

  it('edits the scratchpad', async () => {
    await page.getByLabel('Key').fill('release-note');
    await page.getByLabel('Value').fill('shipped 1.5.0');
    await page.getByRole('button', { name: 'Save entry' }).click();
    await page.getByText('Saved release-note.').waitFor(WAIT);
    expect(await getScratchpadEntry(server.client(project.id), failedPipelineId, 'release-note')).toBe(
      'shipped 1.5.0',
    );
    await page.getByRole('button', { name: 'Edit release-note' }).click();
    await page.getByLabel('Value').fill('shipped 1.5.0 on time');
    await page.getByRole('button', { name: 'Save entry' }).click();
    await page.locator('pre.value', { hasText: 'shipped 1.5.0 on time' }).waitFor(WAIT);
    expect(await getScratchpadEntry(server.client(project.id), failedPipelineId, 'release-note')).toBe(
      'shipped 1.5.0 on time',
    );
  });

  it('restarts the selected failed pipelines from the list', async () => {
    const client = server.client(project.id);
    const { data: command } = await client.GET('/resources/type/{type}/name/{name}', {
      params: { path: { type: 'command', name: 'deploy' } },
    });
    const { data: execution } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: command?.id ?? '' } },
      body: { parameters: { version: '1.6.0', fail_once: true, marker: marker('bulk') } },
    });
    const id = execution?.pipeline_ids[0] ?? '';
    await goToSection('Pipelines');
    await page.getByLabel('Status').selectOption('failed');
    const select = page.getByLabel(`Select release ${id}`);
    await select.waitFor(WAIT);
    await expectAccessible('pipelines');
    await select.check();
    await page.getByRole('button', { name: 'Restart 1 selected failed' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restart from failure' }).click();
    await expect
      .poll(
        async () => (await client.GET('/pipelines/id/{id}', { params: { path: { id } } })).data?.status,
        WAIT,
      )
      .toBe('successful');
  });

  it('sends a custom event and replays it', async () => {
    await goToSection('Events');
    await page.getByLabel('Event name').fill('push');
    await page.getByLabel('Data (a JSON object)').fill('{"branch": "main"}');
    await page.getByRole('button', { name: 'Send event' }).click();
    await page.getByText('Stored 1 event(s)').waitFor(WAIT);
    await expectAccessible('events');
    await page.getByRole('status').getByRole('link').first().click();
    await page.getByRole('heading', { name: 'Event custom/push' }).waitFor(WAIT);
    const original = page.url().split('/').at(-1) ?? '';
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Replay' }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(original), WAIT);
    await page.getByRole('link', { name: original }).waitFor(WAIT);
    const replayId = page.url().split('/').at(-1) ?? '';
    const { data: replay } = await server
      .client(project.id)
      .GET('/events/id/{id}', { params: { path: { id: replayId } } });
    expect(replay).toMatchObject({ name: 'push', original_event_id: original, data: { branch: 'main' } });
  });

  it('shows the resources by type with their specs as YAML', async () => {
    await goToSection('Resources');
    await page.getByLabel('pipelines').check();
    await page.getByText('release', { exact: true }).click();
    await page.locator('pre.yaml', { hasText: 'nb_instances: 2' }).waitFor(WAIT);
    await expectAccessible('resources');
  });

  it('shows the organization and its accounts', async () => {
    await goToSection('Organization');
    await page
      .getByRole('table', { name: 'Accounts of the organization' })
      .getByRole('cell', { name: 'admin@localhost' })
      .waitFor(WAIT);
    await expectAccessible('organization');
  });

  it('shows the home with the day counts, readable at 390 px and in dark mode', async () => {
    await page.getByLabel('Project').selectOption(project.name);
    await page.getByRole('heading', { name: 'Last 7 days' }).waitFor(WAIT);
    await expectAccessible('home');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible('home-dark');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Pipelines', exact: true }).click();
    await page.getByRole('link', { name: 'release' }).first().click();
    await page.locator('.task-graph').waitFor(WAIT);
    await expectAccessible('pipeline-390-dark');
    // Nothing but the scrolling graph and tables is wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it.each([
    { mode: '1280-dark', width: 1280, height: 900, colorScheme: 'dark' },
    { mode: '390', width: 390, height: 844, colorScheme: 'light' },
    { mode: '390-dark', width: 390, height: 844, colorScheme: 'dark' },
  ] as const)('shows every main page at $mode without overflow or serious violation', async (mode) => {
    const client = server.client(project.id);
    const { data: tasks } = await client.GET('/tasks', {
      params: { query: { pipeline_id: failedPipelineId, size: 10 } },
    });
    const testTask = tasks?.elements.find((task) => task.name === 'test');
    const { data: pipeline } = await client.GET('/pipelines/id/{id}', {
      params: { path: { id: failedPipelineId } },
    });
    const inProject = `/p/${project.name}`;
    const title = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
    // Each page, its title, and what shows it has all it reads.
    const pages = [
      [
        'projects',
        '/',
        title(/^Projects of/),
        page.getByRole('main').getByRole('link', { name: project.name }),
      ],
      ['home', inProject, title(project.name), page.locator('table.days')],
      ['pipelines', `${inProject}/pipelines`, title('Pipelines'), page.locator('main tbody tr').first()],
      [
        'pipeline',
        `${inProject}/pipelines/${failedPipelineId}`,
        title(/^Pipeline release/),
        page.locator('.task-graph'),
        page.locator('pre.json'),
      ],
      ['task', `${inProject}/tasks/${testTask?.id}`, title(/^Task test/), page.locator('pre.output').first()],
      ['commands', `${inProject}/commands`, title('Commands'), page.getByRole('link', { name: 'deploy' })],
      [
        'command',
        `${inProject}/commands/deploy`,
        title('Command deploy'),
        page.getByLabel('version (required)'),
      ],
      ['events', `${inProject}/events`, title('Events'), page.locator('main tbody tr').first()],
      [
        'event',
        `${inProject}/events/${pipeline?.event_id}`,
        title(/^Event /),
        page.locator('main pre').first(),
      ],
      ['resources', `${inProject}/resources`, title('Resources'), page.locator('details.resource').first()],
      [
        'organization',
        '/organization',
        title(/^Organization/),
        page.getByRole('table', { name: 'Accounts of the organization' }),
      ],
    ] as const;
    await page.setViewportSize({ width: mode.width, height: mode.height });
    await page.emulateMedia({ colorScheme: mode.colorScheme });
    for (const [name, path, ...shown] of pages) {
      // In the app, as a link does: a load would forget the key.
      await page.evaluate((to) => history.pushState(null, '', to), path);
      for (const part of shown) await part.waitFor(WAIT);
      await expectAccessible(`${name}-${mode.mode}`);
      // Nothing but the scrolling graph, tables and outputs is wider than the screen.
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, `${name} at ${mode.mode}`).toBeLessThanOrEqual(mode.width);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.evaluate((to) => history.pushState(null, '', to), inProject);
    await page.locator('table.days').waitFor(WAIT);
  });

  it('is usable with the keyboard alone: the skip link, then the sections', async () => {
    // From the top of the page, as after a load.
    await page.evaluate(() => {
      document.body.tabIndex = -1;
      document.body.focus();
      document.body.removeAttribute('tabindex');
    });
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    const reached = new Set<string>();
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      reached.add((await page.evaluate(() => document.activeElement?.textContent?.trim())) ?? '');
    }
    for (const name of ['Sign out', 'Pipelines', 'Commands', 'Events', 'Resources'])
      expect(reached).toContain(name);
  });

  it('signs out and forgets the key and what it showed', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key', { exact: true }).waitFor(WAIT);
    expect(await page.getByLabel('API key', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain(project.name);
  });

  it("shows another organization's user none of it", async () => {
    const otherKey = await server.createOrganization(
      `other-${process.pid}`,
      `admin-${process.pid}@other.test`,
    );
    // A link into the first organization's pipeline, opened fresh (the SPA fallback serves it).
    await page.goto(`${server.url}/p/${project.name}/pipelines/${firstPipelineId}`);
    await signIn(otherKey);
    await page.getByRole('alert').waitFor(WAIT);
    expect(await page.getByRole('alert').textContent()).toContain('unknown_project');
    await page.getByRole('link', { name: 'Pipewright' }).click();
    await page.getByText('No project yet').waitFor(WAIT);
    const html = await page.content();
    expect(html).not.toContain(project.name);
    expect(html).not.toContain(firstPipelineId);
  });

  it('loaded nothing from elsewhere, broke no CSP rule and threw nothing', () => {
    expect(problems.filter((p) => !p.includes('401') && !p.includes('404'))).toEqual([]);
  });
});
