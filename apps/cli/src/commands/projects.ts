import type { Schemas } from '@pipewright/client';
import type { Group } from '../command.js';
import { confirmedOrYes } from '../input.js';
import { printJson, printList } from '../listing.js';
import { JSON_OPTION, LIST_OPTIONS, YES_OPTION } from '../options.js';
import { projectIdOf, type Session } from '../session.js';
import type { Column } from '../table.js';
import { argument, flag } from '../values.js';

const columns: Column<Schemas['Project']>[] = [
  { header: 'NAME', value: (project) => project.name },
  { header: 'ID', value: (project) => project.id, fixed: true },
];

const idOf = (session: Session, nameOrId: string) =>
  projectIdOf(session.client(), { kind: 'ref', value: nameOrId });

export const projects: Group = {
  name: 'projects',
  summary: 'List, create, rename and delete projects.',
  commands: [
    {
      name: 'list',
      summary: 'List the projects of the organization, by name.',
      arity: [0, 0],
      options: LIST_OPTIONS,
      async run(session, invocation) {
        await printList(
          session,
          session.client(),
          '/projects',
          { sort: 'name' },
          invocation.values,
          columns,
          'projects',
        );
        return 0;
      },
    },
    {
      name: 'create',
      args: 'NAME',
      summary: 'Create an empty project (admin accounts only).',
      arity: [1, 1],
      options: JSON_OPTION,
      async run(session, invocation) {
        const { data } = await session
          .client()
          .POST('/projects', { body: { name: argument(invocation, 0) } });
        if (flag(invocation, 'json')) printJson(session, data);
        else session.stdout.write(`Created project ${data?.name} (${data?.id}).\n`);
        return 0;
      },
    },
    {
      name: 'rename',
      args: 'NAME NEW_NAME',
      summary: 'Rename a project (admin accounts only); everything in it stays.',
      arity: [2, 2],
      options: JSON_OPTION,
      async run(session, invocation) {
        const id = await idOf(session, argument(invocation, 0));
        const { data } = await session.client().PUT('/projects/id/{id}', {
          params: { path: { id } },
          body: { name: argument(invocation, 1) },
        });
        if (flag(invocation, 'json')) printJson(session, data);
        else session.stdout.write(`Renamed project ${argument(invocation, 0)} to ${data?.name}.\n`);
        return 0;
      },
    },
    {
      name: 'delete',
      args: 'NAME',
      summary: 'Delete a project and everything in it (admin accounts only).',
      details:
        'Unfinished pipelines are aborted first. This cannot be undone, so it asks for\n' +
        'confirmation on a terminal; without one (a script), --yes is required.',
      arity: [1, 1],
      options: YES_OPTION,
      async run(session, invocation) {
        const name = argument(invocation, 0);
        const id = await idOf(session, name);
        const confirmed = await confirmedOrYes(
          flag(invocation, 'yes'),
          `Delete project ${name} and everything in it? This cannot be undone.`,
          `refusing to delete project ${name}`,
        );
        if (!confirmed) {
          session.stderr.write('Nothing was deleted.\n');
          return 1;
        }
        await session.client().DELETE('/projects/id/{id}', { params: { path: { id } } });
        session.stdout.write(`Deleted project ${name}.\n`);
        return 0;
      },
    },
  ],
};
