import { ApiError, type Schemas, walk } from '@pipewright/client';
import type { Command } from '../command.js';
import { describeValidationErrors, loadSpecs } from '../deploy/load.js';
import { type Plan, planChanges, type ResourceKey } from '../deploy/plan.js';
import { CliError } from '../errors.js';
import { printJson } from '../listing.js';
import { JSON_OPTION } from '../options.js';
import type { Session } from '../session.js';
import { flag } from '../values.js';

const VERBS = {
  create: ['Created', 'Would create'],
  update: ['Updated', 'Would update'],
  delete: ['Deleted', 'Would delete'],
} as const;

function printPlan(session: Session, plan: Plan, dryRun: boolean): void {
  const line = (verb: string, resource: ResourceKey) => `${verb} ${resource.type} ${resource.name}\n`;
  for (const change of ['create', 'update', 'delete'] as const) {
    for (const resource of plan[change]) session.stdout.write(line(VERBS[change][dryRun ? 1 : 0], resource));
  }
  const counts = `${plan.create.length} to create, ${plan.update.length} to update, ${plan.delete.length} to delete, ${plan.unchanged.length} unchanged`;
  session.stdout.write(
    dryRun
      ? `Dry run: ${counts}; nothing was changed.\n`
      : `${plan.create.length} created, ${plan.update.length} updated, ${plan.delete.length} deleted, ${plan.unchanged.length} unchanged.\n`,
  );
}

export const deploy: Command = {
  name: 'deploy',
  args: '[DIR]',
  summary: 'Install the resources described by the YAML files of a directory in the project.',
  details:
    'Reads every *.yaml and *.yml file under DIR (default: the current directory), each\n' +
    'holding one or more resource specs separated by ---. Hidden files and directories are\n' +
    'skipped, and so is what DIR/.pipewrightignore matches (gitignore-like globs: *, ?, **,\n' +
    'a trailing / for directories only, a leading / or inner / anchors to DIR, ! re-includes).\n' +
    'A task step with `source: PATH` (relative to its YAML file) is sent with the content of\n' +
    'that file as its `code`.\n\n' +
    'The set replaces the resources of the project: what is missing from it is deleted.\n' +
    'Errors are shown as FILE:DOCUMENT: /POINTER: REASON, documents counted from 1.',
  arity: [0, 1],
  options: {
    'dry-run': { type: 'boolean', description: 'validate and show the changes, change nothing' },
    ...JSON_OPTION,
  },
  async run(session, invocation) {
    const dryRun = flag(invocation, 'dry-run');
    const { specs, origins } = loadSpecs(invocation.positionals[0] ?? '.');
    const project = await session.project();
    // The changes are computed here, from the resources installed just before sending.
    const installed: Schemas['Resource'][] = [];
    for await (const resource of walk(project.client, '/resources', { size: 100 })) installed.push(resource);
    const plan = planChanges(installed, specs);
    try {
      await project.client.PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id }, ...(dryRun ? { query: { 'dry-run': 'true' } } : {}) },
        // Sent as read: the server validates the whole set and says where it is wrong.
        body: { specs: specs as unknown as Schemas['ResourceSpec'][] },
      });
    } catch (error) {
      const jsvErrors =
        error instanceof ApiError ? (error.data?.jsv_errors as Schemas['JsvError'][]) : undefined;
      if (!(error instanceof ApiError) || error.code !== 'invalid_request_body' || !jsvErrors) throw error;
      for (const line of describeValidationErrors(jsvErrors, origins)) session.stderr.write(`${line}\n`);
      const problems = jsvErrors.length === 1 ? '1 problem' : `${jsvErrors.length} problems`;
      throw new CliError(`${problems} in the resources; nothing was installed (${error.code})`);
    }
    if (flag(invocation, 'json')) {
      printJson(session, {
        dry_run: dryRun,
        created: plan.create,
        updated: plan.update,
        deleted: plan.delete,
        unchanged: plan.unchanged,
      });
    } else {
      printPlan(session, plan, dryRun);
    }
    return 0;
  },
};
