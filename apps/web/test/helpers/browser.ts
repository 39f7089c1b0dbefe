/// <reference lib="dom" />
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium, headless: no browser is downloaded. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
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
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * The serious and critical accessibility violations axe-core finds on the page. Its script is
 * evaluated through the DevTools protocol, which the page's Content-Security-Policy does not
 * govern (an injected <script> would rightly be refused).
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(context: Document): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    return (await axe.run(document)).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Where the screenshots of a run go (not in the tree): PIPEWRIGHT_SCREENSHOTS, or a temp directory. */
export const SCREENSHOT_DIR =
  process.env.PIPEWRIGHT_SCREENSHOTS ?? join(tmpdir(), 'pipewright-web-screenshots');

/** A screenshot of the whole page, or of its top `clip` only. */
export async function screenshot(page: Page, name: string, clip?: { width: number; height: number }) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot(clip ? { path, clip: { x: 0, y: 0, ...clip } } : { path, fullPage: true });
}
