/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { readFileSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The docs page must teach the whole API with no network: open the built file in
// headless Chromium with every non-file request refused, and find every operation.

const PAGE_URL = new URL('../dist/index.html', import.meta.url).href;
const SPEC_URL = new URL('../../../openapi/dist/openapi.json', import.meta.url);

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'head', 'patch', 'options']);
const spec = JSON.parse(readFileSync(SPEC_URL, 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  servers: { url: string; description: string }[];
  tags: { name: string; description: string; 'x-traitTag'?: boolean }[];
  'x-tagGroups': { name: string; tags: string[] }[];
};
const guides = spec.tags.filter((tag) => tag['x-traitTag']);

/** The anchor of a heading of a guide, as the page makes it. */
const anchor = (guide: string, heading: string) =>
  `${guide.toLowerCase().replaceAll(' ', '-')}/${heading.toLowerCase().replaceAll(' ', '-')}`;
const operations = Object.values(spec.paths).flatMap((item) =>
  Object.entries(item)
    .filter(([method]) => METHODS.has(method))
    .map(([, operation]) => operation),
);

let browser: Browser;
let page: Page;
const refused: string[] = [];

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    timeout: 90_000, // Playwright's bounds (30 s by default) are for a hung browser, not a busy machine
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage();
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    refused.push(url);
    return route.abort();
  });
  page.setDefaultTimeout(60_000);
  await page.goto(PAGE_URL, { timeout: 90_000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('docs page', () => {
  it('covers the operations of the spec', () => {
    expect(operations.length).toBeGreaterThanOrEqual(37);
  });

  it('renders the guide offline', async () => {
    for (const section of ['authentication', 'errors', 'pagination', 'versioning']) {
      await page.waitForSelector(`[id="section/${section}"]`);
    }
    // The page's script is inline: nothing it needs was refused (a decorative logo may be).
    expect(refused.filter((url) => !url.endsWith('.svg'))).toEqual([]);
  });

  it('shows every tag in the menu: a tag of no x-tagGroups group would be hidden', () => {
    const grouped = spec['x-tagGroups'].flatMap((group) => group.tags);
    expect(grouped.sort()).toEqual(spec.tags.map((tag) => tag.name).sort());
  });

  it('shows the server descriptions as written, without markdown the box would not render', async () => {
    const text = await page.evaluate(() => document.body.innerText);
    for (const server of spec.servers) {
      expect(server.description).not.toMatch(/[`*_[]/);
      expect(text).toContain(server.description);
    }
  });

  it('has the guides: getting started and the resource reference', () => {
    expect(guides.map((guide) => guide.name)).toEqual(['Getting started', 'Resource reference']);
  });

  it.each(
    guides.flatMap((guide) =>
      [...guide.description.matchAll(/^## (.+)$/gm)].map((match) => [guide.name, match[1] ?? ''] as const),
    ),
  )('renders the guide %s, section %s, with its code within the column', async (guide, heading) => {
    const id = anchor(guide, heading);
    await page.evaluate((hash) => {
      window.location.hash = `#/${hash}`;
    }, id);
    const section = await page.waitForSelector(`[id="${id}"]`);
    expect(await section.textContent()).toContain(heading);
    // No code block runs past the edge of its column, where its end would be hidden.
    const cut = await page.evaluate(() =>
      [...document.querySelectorAll('pre')]
        .filter((pre) => pre.scrollWidth > pre.clientWidth + 1)
        .map((pre) => pre.textContent?.slice(0, 60)),
    );
    expect(cut).toEqual([]);
  });

  it.each(operations.map((o) => [o.operationId, o]))(
    'renders %s with its summary',
    async (_id, operation) => {
      const anchor = `${operation.tags[0]?.toLowerCase().replaceAll(' ', '-')}/${operation.operationId.toLowerCase()}`;
      await page.evaluate((hash) => {
        window.location.hash = `#/${hash}`;
      }, anchor);
      const section = await page.waitForSelector(`[id="${anchor}"]`);
      expect(await section.textContent()).toContain(operation.summary);
    },
  );
});
