import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommand, serveConfig, UsageError } from '../src/config.js';

// The options of notifications: the SMTP server of emails, and how often notifications are tried.

const configOf = (argv: string[], env: Record<string, string> = {}) =>
  serveConfig(parseCommand(argv).values, env);

const dir = mkdtempSync(join(tmpdir(), 'pipewright-smtp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--smtp-*', () => {
  it('has no SMTP server without --smtp-host', () => {
    expect(configOf([]).smtp).toBeUndefined();
  });

  it('reads the server, with STARTTLS on port 587 by default, and TLS on 465', () => {
    expect(configOf(['--smtp-host', 'mail.example.test', '--smtp-from', 'ci@example.test']).smtp).toEqual({
      host: 'mail.example.test',
      port: 587,
      tls: 'starttls',
      user: undefined,
      password: undefined,
      from: 'ci@example.test',
    });
    const env = { PIPEWRIGHT_SMTP_HOST: 'mail.example.test', PIPEWRIGHT_SMTP_FROM: 'ci@example.test' };
    expect(configOf(['--smtp-tls', 'tls'], env).smtp).toMatchObject({ port: 465, tls: 'tls' });
    expect(configOf(['--smtp-tls', 'off', '--smtp-port', '25'], env).smtp).toMatchObject({
      port: 25,
      tls: 'off',
    });
  });

  it('reads the password from its file, or its variable, never from an option', () => {
    const file = join(dir, 'password');
    writeFileSync(file, 'from the file\n');
    const base = ['--smtp-host', 'mail.example.test', '--smtp-from', 'ci@example.test', '--smtp-user', 'ci'];
    expect(configOf([...base, '--smtp-password-file', file]).smtp).toMatchObject({
      user: 'ci',
      password: 'from the file',
    });
    expect(configOf(base, { PIPEWRIGHT_SMTP_PASSWORD: 'from the variable' }).smtp?.password).toBe(
      'from the variable',
    );
    expect(() => configOf([...base, '--smtp-password', 'x'])).toThrow(UsageError);
    expect(() => configOf([...base, '--smtp-password-file', join(dir, 'missing')])).toThrow(
      /--smtp-password-file: cannot read/,
    );
  });

  it('refuses a server without a sender, or an unknown TLS mode', () => {
    expect(() => configOf(['--smtp-host', 'mail.example.test'])).toThrow(
      new UsageError('--smtp-host wants --smtp-from, the sender of the emails'),
    );
    expect(() =>
      configOf(['--smtp-host', 'h', '--smtp-from', 'a@example.test', '--smtp-tls', 'maybe']),
    ).toThrow(new UsageError('--smtp-tls wants starttls, tls or off, not maybe'));
  });
});

describe('--notification-attempts and --notification-retry-delay', () => {
  it('try 6 times, 30 s after the first failure, by default', () => {
    expect(configOf([]).notifications).toEqual({ maxAttempts: 6, firstRetryDelayMs: 30_000 });
    expect(
      configOf(['--notification-attempts', '2'], { PIPEWRIGHT_NOTIFICATION_RETRY_DELAY: '5' }).notifications,
    ).toEqual({ maxAttempts: 2, firstRetryDelayMs: 5000 });
  });

  it.each([
    ['--notification-attempts', '0', '--notification-attempts wants 1 to 20, not 0'],
    ['--notification-attempts', '21', '--notification-attempts wants 1 to 20, not 21'],
    ['--notification-retry-delay', '3601', '--notification-retry-delay wants 1 to 3600, not 3601'],
  ])('refuses %s %s', (flag, value, message) => {
    expect(() => configOf([flag, value])).toThrow(new UsageError(message));
  });
});
