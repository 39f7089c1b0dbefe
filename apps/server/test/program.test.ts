import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@pipewright/client';
import { lastLine, logEntries, runProgram, startProgram, tempDirs } from '@pipewright/testing';
import { describe, expect, it } from 'vitest';
import { eventually } from './program.js';

const tempDir = tempDirs();
const dataDir = () => tempDir('pipewright-program-');

const baseOf = (url: string) => url.replace(/\/v0$/, '');

/** Whether the temp directory's file system takes the top-of-hierarchy flag (ext2/3/4 with chattr). */
function topDirectoryFlagHere(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'pipewright-probe-'));
  try {
    return spawnSync('chattr', ['+T', probe], { stdio: 'ignore' }).status === 0;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

describe('pipewright-server', () => {
  it('creates the first key, a self-signed certificate, and serves HTTPS with them', async () => {
    const dir = dataDir();
    const server = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dir]);
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/v0$/);
      const key = lastLine(server.stdout());
      expect(key).toMatch(/^pwk_/);
      const keyFile = join(dir, 'admin-api-key');
      expect(readFileSync(keyFile, 'utf8').trim()).toBe(key);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const certFile = join(dir, 'tls', 'cert.pem');
      // In plain words, with the key: where the server answers, and how to log in.
      expect(server.stdout()).toBe(
        `Pipewright serves ${server.url}, with a self-signed certificate in ${certFile}\n` +
          `Log in with: pipewright login --api-url ${baseOf(server.url)} --ca ${certFile}\n` +
          'Created organization "default" with admin account admin@localhost.\n' +
          `Its API key is shown only this once and saved in ${keyFile}:\n${key}\n`,
      );
      const ca = readFileSync(certFile, 'utf8');
      const client = createClient({ baseUrl: baseOf(server.url), apiKey: key, ca });
      expect((await client.GET('/status')).data).toEqual({});
      expect((await client.GET('/org')).data?.name).toBe('default');
      expect((await client.GET('/account')).data).toMatchObject({
        email_address: 'admin@localhost',
        role: 'admin',
      });
      // One log line per request, with what an operator needs.
      const logged = await eventually(() =>
        logEntries(server.stderr())
          .filter((entry) => entry.message === 'request' && String(entry.route).includes('/account'))
          .at(-1),
      );
      expect(logged).toMatchObject({
        method: 'GET',
        route: expect.stringContaining('/account'),
        status: 200,
        duration_ms: expect.any(Number),
        request_id: expect.any(String),
      });
      expect(server.stderr()).not.toContain(key);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  });

  it('stops on SIGTERM at the end of its stop sequence, which it logs', async () => {
    const server = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dataDir()]);
    expect(await server.stop('SIGTERM')).toBe(0);
    // Written before the process exits; its pipe may be read a little after the exit.
    await eventually(() => (server.stderr().includes('"message":"stopped"') ? true : undefined));
  });

  it('never creates or prints a key again, and reuses its certificate', async () => {
    const dir = dataDir();
    const first = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dir]);
    const key = lastLine(first.stdout());
    const cert = readFileSync(join(dir, 'tls', 'cert.pem'), 'utf8');
    await first.stop();
    const second = await startProgram(['--listen', '127.0.0.1:0'], { PIPEWRIGHT_DATA_DIR: dir });
    try {
      expect(second.stdout()).toBe('');
      expect(readFileSync(join(dir, 'tls', 'cert.pem'), 'utf8')).toBe(cert);
      const client = createClient({ baseUrl: baseOf(second.url), apiKey: key, ca: cert });
      expect((await client.GET('/status')).data).toEqual({});
    } finally {
      await second.stop('SIGINT');
    }
  });

  it('refuses to serve a data directory another server serves, and serves it once that one is gone', async () => {
    const dir = dataDir();
    const first = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dir]);
    try {
      const second = await runProgram(['--listen', '127.0.0.1:0', '--data-dir', dir]);
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`pipewright-server: another pipewright-server is already serving ${dir}\n`);
      // The first is undisturbed.
      const key = lastLine(first.stdout());
      const ca = readFileSync(join(dir, 'tls', 'cert.pem'), 'utf8');
      const client = createClient({ baseUrl: baseOf(first.url), apiKey: key, ca });
      expect((await client.GET('/status')).response.status).toBe(200);
    } finally {
      // Killed, not stopped: the lock must not outlive a crash.
      await first.stop('SIGKILL');
    }
    const third = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dir]);
    await third.stop();
  });

  it.skipIf(process.getuid?.() !== 0)(
    'gives servers of one host task users of their own, since each kills every process of its range',
    async () => {
      const rangeOf = (server: Awaited<ReturnType<typeof startProgram>>) =>
        logEntries(server.stderr())
          .filter((entry) => entry.message === 'tasks run as users of their own')
          .map((logged) => ({ first: logged.first_uid as number, last: logged.last_uid as number }))[0];
      const one = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dataDir()]);
      const two = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dataDir()]);
      try {
        const [a, b] = [rangeOf(one), rangeOf(two)];
        expect(a && b).toBeTruthy();
        expect((a?.last ?? 0) < (b?.first ?? 0) || (b?.last ?? 0) < (a?.first ?? 0)).toBe(true);
        // A range asked for explicitly is one server's too.
        const taken = await runProgram([
          '--listen',
          '127.0.0.1:0',
          '--data-dir',
          dataDir(),
          '--task-users',
          `${a?.first}-${a?.last}`,
        ]);
        expect(taken.code).toBe(1);
        expect(taken.stderr).toContain(`uses task users ${a?.first}-${a?.last}`);
      } finally {
        await one.stop();
        await two.stop();
      }
    },
  );

  it('runs the admin commands while the server runs, each printing a working key last', async () => {
    const dir = dataDir();
    const server = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dir]);
    try {
      const ca = readFileSync(join(dir, 'tls', 'cert.pem'), 'utf8');
      const as = (apiKey: string) => createClient({ baseUrl: baseOf(server.url), apiKey, ca });

      const org = await runProgram([
        'create-organization',
        'acme',
        '--admin-email',
        'boss@acme.test',
        '--data-dir',
        dir,
      ]);
      expect(org.code).toBe(0);
      expect((await as(lastLine(org.stdout)).GET('/org')).data?.name).toBe('acme');

      const account = await runProgram([
        'create-account',
        '--organization',
        'acme',
        '--email',
        'dev@acme.test',
        '--role',
        'user',
        '--data-dir',
        dir,
      ]);
      expect(account.code).toBe(0);
      const me = await as(lastLine(account.stdout)).GET('/account');
      expect(me.data).toMatchObject({ email_address: 'dev@acme.test', role: 'user' });

      const key = await runProgram(['create-api-key', '--email', 'dev@acme.test', '--data-dir', dir]);
      expect(key.code).toBe(0);
      expect(lastLine(key.stdout)).not.toBe(lastLine(account.stdout));
      expect((await as(lastLine(key.stdout)).GET('/account')).data?.id).toBe(me.data?.id);

      const again = await runProgram([
        'create-organization',
        'acme',
        '--admin-email',
        'x@acme.test',
        '--data-dir',
        dir,
      ]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('already exists');
    } finally {
      await server.stop();
    }
  });

  it.skipIf(!topDirectoryFlagHere())(
    'marks its work root as the top of directory hierarchies, so that its attempt slots spread over the disk',
    async () => {
      const dir = dataDir();
      const server = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dir]);
      try {
        const [flags = ''] = execFileSync('lsattr', ['-d', join(dir, 'work')], { encoding: 'utf8' }).split(
          ' ',
        );
        expect(flags).toContain('T');
      } finally {
        await server.stop();
      }
    },
  );

  it('serves plain HTTP only when asked to', async () => {
    const server = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', dataDir()], {
      PIPEWRIGHT_INSECURE_HTTP: '1',
    });
    try {
      expect(server.url).toMatch(/^http:\/\//);
      const client = createClient({ baseUrl: baseOf(server.url), apiKey: lastLine(server.stdout()) });
      expect((await client.GET('/status')).data).toEqual({});
    } finally {
      await server.stop();
    }
  });

  it('uses a given certificate and key', async () => {
    const source = dataDir();
    const first = await startProgram(['--listen', '127.0.0.1:0', '--data-dir', source]);
    await first.stop();
    const dir = dataDir();
    const server = await startProgram([
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      dir,
      '--tls-cert',
      join(source, 'tls', 'cert.pem'),
      '--tls-key',
      join(source, 'tls', 'key.pem'),
    ]);
    try {
      const client = createClient({
        baseUrl: baseOf(server.url),
        apiKey: lastLine(server.stdout()),
        ca: readFileSync(join(source, 'tls', 'cert.pem')),
      });
      expect((await client.GET('/status')).data).toEqual({});
      expect(() => statSync(join(dir, 'tls'))).toThrow();
    } finally {
      await server.stop();
    }
  });

  it('documents every flag in --help', async () => {
    const help = await runProgram(['--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '--listen',
      '--data-dir',
      '--tls-cert',
      '--tls-key',
      '--insecure-http',
      '--log-level',
    ]) {
      expect(help.stdout).toContain(flag);
    }
    for (const variable of ['PIPEWRIGHT_LISTEN', 'PIPEWRIGHT_DATA_DIR', 'PIPEWRIGHT_INSECURE_HTTP']) {
      expect(help.stdout).toContain(variable);
    }
  });

  it.each([
    [['--no-such-flag']],
    [['--listen', 'nowhere']],
    [['create-account', '--email', 'a@b.test', '--role', 'boss']],
    [['frobnicate']],
  ])('exits 2 with the usage on %j', async (args) => {
    const result = await runProgram([...args, '--data-dir', dataDir()]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage:');
  });
});
