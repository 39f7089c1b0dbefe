import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from '../command.js';
import { PROJECT_FILE } from '../config.js';
import { CliError } from '../errors.js';
import { exampleFiles } from '../example-project.js';

/** A project name (`^[a-z0-9][a-z0-9_-]{0,99}$`) made from a directory's name. */
function projectNameFor(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 100);
  return name || 'example';
}

/** `pipewright deploy`, as typed from where the user is: `cd DIR` first when DIR is elsewhere. */
function nextSteps(dir: string, project: string, selected: boolean): string {
  const steps = [
    ...(resolve(dir) === resolve('.') ? [] : [`cd ${dir}`]),
    ...(selected ? [] : [`pipewright projects create ${project}    # unless it exists`]),
    'pipewright deploy --dry-run',
    'pipewright deploy',
    'pipewright commands execute release version=1.0.0 --wait',
    `pipewright events send push '{"branch": "main"}'`,
  ];
  return `Next:\n${steps.map((step) => `  ${step}\n`).join('')}`;
}

export const init: Command = {
  name: 'init',
  args: '[DIR]',
  summary: 'Write a small working example project into DIR (default: the current directory).',
  details:
    'The example holds tasks, pipelines of dependent tasks, a command with a parameter, a\n' +
    'trigger of custom events and a schedule, each file commented, and a pipewright.json\n' +
    'naming the project to deploy to: the selected one (--project, PIPEWRIGHT_PROJECT_ID...),\n' +
    'else one named after DIR. An existing pipewright.json is kept. Nothing is overwritten:\n' +
    'if one of the files exists, nothing is written. No server is needed.',
  arity: [0, 1],
  async run(session, invocation) {
    const dir = invocation.positionals[0] ?? '.';
    const choice = session.settings.project;
    const project = choice?.value ?? projectNameFor(dir);
    const keepsProjectFile = existsSync(join(dir, PROJECT_FILE));
    const files = [
      ...exampleFiles(),
      ...(keepsProjectFile
        ? []
        : [{ path: PROJECT_FILE, content: Buffer.from(`${JSON.stringify({ project }, null, 2)}\n`) }]),
    ];
    const existing = files.map((file) => join(dir, file.path)).filter((path) => existsSync(path));
    if (existing.length > 0) {
      throw new CliError(`refusing to overwrite ${existing.join(', ')}; nothing was written`);
    }
    for (const file of files) {
      const target = join(dir, file.path);
      mkdirSync(dirname(target), { recursive: true });
      // `wx`: a file that appeared meanwhile is not overwritten either.
      writeFileSync(target, file.content, { flag: 'wx' });
    }
    session.stdout.write(
      `Wrote an example project in ${dir}:\n${files.map((file) => `  ${join(dir, file.path)}\n`).join('')}` +
        (keepsProjectFile ? `Kept ${join(dir, PROJECT_FILE)}.\n` : '') +
        nextSteps(dir, project, choice !== undefined || keepsProjectFile),
    );
    return 0;
  },
};
