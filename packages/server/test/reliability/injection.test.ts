import { readdirSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  command,
  execute,
  finished,
  pipeline,
  projectWith,
  stepsOf,
  task,
  tasksOf,
} from '../helpers/projects.js';
import { sharedTestServer } from '../helpers/test-server.js';

// No shell injection: arguments of a `command` step, parameter values of a command and
// variables of a task reach the process as they are, never parsed by a shell. Every
// attempt below would create a file in `trap` if any shell read it.

const server = sharedTestServer();
let trap: string;
beforeAll(() => {
  trap = server.tempDir();
});

const attempts = () => [
  `$(touch ${trap}/substitution)`,
  `\`touch ${trap}/backquotes\``,
  `; touch ${trap}/semicolon`,
  `&& touch ${trap}/and`,
  `| touch ${trap}/pipe`,
  `\ntouch ${trap}/newline`,
  `'; touch ${trap}/quote; '`,
  '$HOME *',
];

async function outputOf(specs: unknown[], parameters: Record<string, string> = {}) {
  const { client } = await projectWith(server, specs);
  const pipelineId = await execute(client, 'run', parameters);
  expect((await finished(client, pipelineId)).status).toBe('successful');
  const [run] = await tasksOf(client, pipelineId);
  return (await stepsOf(client, run?.id ?? '')).map((step) => step.output).join('');
}

describe('no shell injection', () => {
  it('passes the arguments of a command step as they are', async () => {
    const output = await outputOf([
      task('echo', { steps: [{ command: 'printf', arguments: ['[%s]\\n', ...attempts()] }] }),
      pipeline('run', [{ task: 'echo' }]),
      command('run', ['run']),
    ]);
    expect(output).toBe(
      attempts()
        .map((a) => `[${a}]\n`)
        .join(''),
    );
    expect(readdirSync(trap)).toEqual([]);
  });

  it('passes parameter values and task variables as they are', async () => {
    const parameters = Object.fromEntries(attempts().map((value, i) => [`p${i}`, value]));
    const output = await outputOf(
      [
        task('show', {
          environment: { TASK_VARIABLE: attempts()[0] },
          steps: [
            {
              code: [
                ...attempts().map((_value, i) => `printf '[%s]\\n' "$P${i}"`),
                `printf '[%s]\\n' "$TASK_VARIABLE"`,
              ].join('\n'),
            },
          ],
        }),
        pipeline('run', [{ task: 'show' }]),
        command(
          'run',
          ['run'],
          attempts().map((_value, i) => ({ name: `p${i}`, type: 'string', environment: `P${i}` })),
        ),
      ],
      parameters,
    );
    expect(output).toBe([...attempts(), attempts()[0]].map((a) => `[${a}]\n`).join(''));
    expect(readdirSync(trap)).toEqual([]);
  });
});
