/// <reference lib="dom" />
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Schemas } from '@pipewright/client';
import { type RunningServer, startServer } from '@pipewright/testing';
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, seriousViolations } from './helpers/browser.js';
import { RESOURCES } from './helpers/resources.js';

// The resources page's cross-references and next ticks, and the task page following a running
// step's output through the task's output stream, in headless Chromium against the real server.

const WAIT = { timeout: 30_000 };

let server: RunningServer;
let browser: Browser;
let page: Page;
let project: Schemas['Project'];
/** What the page must never do: break its CSP, throw. */
const problems: string[] = [];
/** The paths of the API requests the page made. */
const apiRequests: string[] = [];

beforeAll(async () => {
  server = await startServer();
  browser = await launchChromium();
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 900 },
  });
  page = await context.newPage();
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
  const { data } = await server.client().POST('/projects', { body: { name: `resources-${process.pid}` } });
  project = data as Schemas['Project'];
  await server.client().PUT('/projects/id/{id}/resources', {
    params: { path: { id: project.id } },
    body: { specs: RESOURCES as never[] },
  });
  await page.goto(`${server.url}/`);
  await page.getByLabel('API key', { exact: true }).fill(server.apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Project').selectOption(project.name);
  await page.getByRole('heading', { name: 'Last 7 days' }).waitFor(WAIT);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** In the app, as a link does: a load would forget the key. */
const go = (path: string) =>
  page.evaluate((to) => history.pushState(null, '', to), `/p/${project.name}${path}`);

/** The links under one heading of a resource's cross-references, once it shows them. */
async function linksUnder(resource: string, heading: string): Promise<string[]> {
  const links = page
    .getByRole('group', { name: resource })
    .locator(`dt:text-is("${heading}") + dd`)
    .getByRole('link');
  await links.first().waitFor(WAIT);
  return links.allTextContents();
}

describe('resources and task output', () => {
  it('shows which pipelines use a task and what starts them, linked, and the next ticks of a time trigger', async () => {
    await go('/resources');
    await page.getByLabel('tasks').check();
    await page.getByRole('group', { name: 'task build' }).getByText('build', { exact: true }).click();
    expect(await linksUnder('task build', 'Used by the pipelines')).toEqual(['check', 'release']);

    // A link opens the pipeline, among the pipelines.
    await page.getByRole('group', { name: 'task build' }).getByRole('link', { name: 'check' }).click();
    await page.waitForURL(/\/resources\/pipeline\/check$/, WAIT);
    await page.getByRole('group', { name: 'pipeline check' }).locator('pre.yaml').waitFor(WAIT);
    expect(await linksUnder('pipeline check', 'Uses the tasks')).toEqual(['build']);
    expect(await linksUnder('pipeline check', 'Started by the triggers')).toEqual([
      'on-push',
      'weekly-check',
    ]);
    await page.getByRole('group', { name: 'pipeline release' }).getByText('release', { exact: true }).click();
    expect(await linksUnder('pipeline release', 'Uses the tasks')).toEqual(['build', 'publish', 'test']);
    expect(await linksUnder('pipeline release', 'Started by the commands')).toEqual(['deploy']);

    await page
      .getByRole('group', { name: 'pipeline check' })
      .getByRole('link', { name: 'weekly-check' })
      .click();
    await page.waitForURL(/\/resources\/trigger\/weekly-check$/, WAIT);
    expect(await linksUnder('trigger weekly-check', 'Starts the pipelines')).toEqual(['check']);
    const ticks = page.getByRole('list', { name: 'Next ticks of weekly-check' }).locator('time');
    await ticks.first().waitFor(WAIT);
    const client = server.client(project.id);
    const { data: trigger } = await client.GET('/resources/type/{type}/name/{name}', {
      params: { path: { type: 'trigger', name: 'weekly-check' } },
    });
    const { data: next } = await client.GET('/resources/id/{id}/next_ticks', {
      params: { path: { id: trigger?.id ?? '' } },
    });
    expect(next?.next_ticks).toHaveLength(5);
    expect(await ticks.evaluateAll((times) => times.map((time) => time.getAttribute('datetime')))).toEqual(
      next?.next_ticks,
    );
    await screenshot(page, 'resources-references');
    expect(await seriousViolations(page)).toEqual([]);
    // Readable at 390 px wide and dark as well: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'resources-references-390-dark');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('shows the line a running step prints before the step ends, from the output stream', async () => {
    const marker = join(tmpdir(), `pipewright-web-follow-${process.pid}-${Date.now()}`);
    const client = server.client(project.id);
    const { data: command } = await client.GET('/resources/type/{type}/name/{name}', {
      params: { path: { type: 'command', name: 'follow' } },
    });
    const { data: execution } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: command?.id ?? '' } },
      body: { parameters: { marker } },
    });
    const pipelineId = execution?.pipeline_ids[0] ?? '';
    // The step has started, and waits for its first file before it prints.
    let taskId = '';
    await expect
      .poll(async () => {
        const { data: tasks } = await client.GET('/tasks', {
          params: { query: { pipeline_id: pipelineId } },
        });
        const id = tasks?.elements[0]?.id ?? '';
        const { data: steps } = id
          ? await client.GET('/tasks/id/{id}/steps', { params: { path: { id } } })
          : { data: [] };
        taskId = steps?.[0]?.status === 'started' ? id : '';
        return taskId;
      }, WAIT)
      .not.toBe('');
    await go(`/tasks/${taskId}`);
    await page.getByText('No output.').waitFor(WAIT);

    // Every read of the steps is held back from now until the line shows: it can only come
    // through the output stream.
    const held: Route[] = [];
    let holding = true;
    const stepsUrl = `**/v0/tasks/id/${taskId}/steps`;
    await page.route(stepsUrl, async (route) => {
      if (holding) held.push(route);
      else await route.continue();
    });
    writeFileSync(`${marker}.print`, '');
    await page.locator('pre.output .ansi-cyan-fg', { hasText: 'waiting for the release' }).waitFor(WAIT);
    expect(apiRequests).toContain(`/v0/tasks/id/${taskId}/output`);
    // And the step still runs: it waits for the release file.
    const { data: steps } = await client.GET('/tasks/id/{id}/steps', { params: { path: { id: taskId } } });
    expect(steps?.[0]).toMatchObject({ status: 'started', output: expect.stringContaining('waiting') });
    // Released while the handler is still there: continuing them after unroute() failed once
    // on a loaded machine with "Route is already handled".
    holding = false;
    for (const route of held) await route.continue();
    await page.unroute(stepsUrl);

    await page.getByLabel('Search the output').fill('release');
    await page.getByText('1 match', { exact: true }).waitFor(WAIT);
    await screenshot(page, 'task-following');
    expect(await seriousViolations(page)).toEqual([]);

    // What follows shows too, searched as it comes, then the step's end and the task's.
    writeFileSync(`${marker}.release`, '');
    await page.locator('pre.output', { hasText: 'released' }).waitFor(WAIT);
    await page.getByText('2 matches', { exact: true }).waitFor(WAIT);
    await page.locator('h1 .badge', { hasText: 'successful' }).waitFor(WAIT);
    await page.locator('.step-header .badge', { hasText: 'successful' }).waitFor(WAIT);
    for (const suffix of ['.print', '.release']) rmSync(`${marker}${suffix}`, { force: true });
  });

  it('broke no CSP rule and threw nothing', () => {
    expect(problems).toEqual([]);
  });
});
