import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

// The built app (npm run build), as the server sends it.
const DIST = new URL('../dist/', import.meta.url);
const BUDGET_BYTES = 200 * 1024;

describe('web bundle', () => {
  it('weighs at most 200 KiB of JavaScript, gzipped, all chunks together', () => {
    const scripts = readdirSync(new URL('assets/', DIST)).filter((name) => name.endsWith('.js'));
    expect(scripts.length).toBeGreaterThan(0);
    const gzipped = scripts.reduce(
      (sum, name) => sum + gzipSync(readFileSync(new URL(`assets/${name}`, DIST)), { level: 9 }).length,
      0,
    );
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('has no inline script or style, and loads nothing from another origin', () => {
    const page = readFileSync(new URL('index.html', DIST), 'utf8');
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/assets\//);
      expect(body?.trim()).toBe('');
    }
    expect(page).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});
