import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@pipewright/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCommand, serveConfig, UsageError } from '../src/config.js';
import { chooseContainerEngine, containerInstance } from '../src/container-engine.js';
import { StartupError } from '../src/data-dir.js';

// The engine of the container runtime: --container-engine, or podman, else docker, on the
// server's PATH; and the instance that labels the server's containers. (Containers themselves
// run in packages/server/test/api/containers.test.ts.)

const configOf = (argv: string[], env: Record<string, string> = {}) =>
  serveConfig(parseCommand(argv).values, env);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pipewright-engines-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const install = (name: string) => writeFileSync(join(dir, name), '#!/bin/sh\n', { mode: 0o755 });
const choose = (argv: string[]) =>
  chooseContainerEngine(configOf(argv), { PATH: dir, CONTAINERS_CONF: '/etc/x.conf' }, silentLogger);

describe('--container-engine', () => {
  it('takes podman, else docker, found on the PATH, run with the server environment', () => {
    expect(choose([])).toBeUndefined();
    install('docker');
    expect(choose([])).toMatchObject({ name: 'docker', path: join(dir, 'docker') });
    install('podman');
    expect(choose([])).toEqual({
      name: 'podman',
      path: join(dir, 'podman'),
      environment: { PATH: dir, CONTAINERS_CONF: '/etc/x.conf' },
    });
  });

  it('takes the engine asked for, refuses to start without it, and none when off', () => {
    install('podman');
    expect(() => choose(['--container-engine', 'docker'])).toThrow(
      new StartupError('--container-engine docker: docker is not on the PATH'),
    );
    install('docker');
    expect(choose(['--container-engine', 'docker'])).toMatchObject({ name: 'docker' });
    expect(choose(['--container-engine', 'off'])).toBeUndefined();
    expect(configOf([], { PIPEWRIGHT_CONTAINER_ENGINE: 'off' }).containerEngine).toBe('off');
  });

  it('refuses another value, saying what it wants', () => {
    expect(() => configOf(['--container-engine', 'lxc'])).toThrow(
      new UsageError('--container-engine wants podman, docker or off, not lxc'),
    );
  });
});

describe('containerInstance', () => {
  it('is the same for a data directory across starts, whatever path names it, and differs between two', () => {
    const dataA = mkdtempSync(join(dir, 'data-'));
    const dataB = mkdtempSync(join(dir, 'data-'));
    symlinkSync(dataA, join(dir, 'link'));
    expect(containerInstance(dataA)).toMatch(/^[0-9a-f]{16}$/);
    expect(containerInstance(join(dir, 'link'))).toBe(containerInstance(dataA));
    expect(containerInstance(dataB)).not.toBe(containerInstance(dataA));
  });
});
