import { describe, expect, it } from 'vitest';
import { parseCommand, serveConfig, USAGE, UsageError } from '../src/config.js';

// The server's options read from argv and the environment: those whose parsing has rules of
// its own. (How the program uses them is tested by running it: program.test.ts and others.)

const configOf = (argv: string[], env: Record<string, string> = {}) =>
  serveConfig(parseCommand(argv).values, env);

describe('--task-timeout', () => {
  it.each([
    [[], {}, 21600],
    [['--task-timeout', '1'], {}, 1],
    [['--task-timeout', '604800'], {}, 604800],
    [['--task-timeout', 'off'], {}, undefined],
    [[], { PIPEWRIGHT_TASK_TIMEOUT: '90' }, 90],
    [['--task-timeout', '30'], { PIPEWRIGHT_TASK_TIMEOUT: 'off' }, 30],
  ])('reads %j with %j as %s seconds', (argv, env, seconds) => {
    expect(configOf(argv, env).taskTimeoutSeconds).toBe(seconds);
  });

  it.each(['0', '604801', '1.5', '-1', '1h', ''])('refuses %j, saying what it wants', (raw) => {
    expect(() => configOf([`--task-timeout=${raw}`])).toThrow(
      new UsageError(`--task-timeout wants a number of seconds (1 to 604800) or off, not ${raw}`),
    );
  });

  it('is documented in --help with its variable and default', () => {
    expect(USAGE).toContain('--task-timeout SECONDS|off\n');
    expect(USAGE).toMatch(/PIPEWRIGHT_TASK_TIMEOUT, default\s+21600: 6 hours/);
  });
});
