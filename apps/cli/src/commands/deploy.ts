import { ApiError, type Schemas, walk } from '@pipewright/client';
import type { Command } from '../command.js';
import { describeValidationErrors, type LoadedSpecs, loadSpecs } from '../deploy/load.js';
import { type Plan, planChanges, type ResourceKey } from '../deploy/plan.js';
import { CliError, problemCount } from '../errors.js';
import { confirmedOrYes } from '../input.js';
import { printJson } from '../listing.js';
import { JSON_OPTION, YES_OPTION } from '../options.js';
import type { ProjectSession, Session } from '../session.js';
import { flag } from '../values.js';

const VERBS = {
  create: ['Created', 'Would create'],
  update: ['Updated', 'Would update'],
  delete: ['Deleted', 'Would delete'],
} as const;

/** A value of a field change as one short line: its JSON, cut past a bound (--json has it whole). */
function shownValue(value: unknown): string {
  if (value === undefined) return '(none)';
  const json = JSON.stringify(value);
  return json.length > 200 ? `${json.slice(0, 200)}...` : json;
}

const describeResource = (resource: ResourceKey) => `${resource.type} ${resource.name}`;

/** `task a, task b and 3 more`: resources in a sentence that stays short. */
function resourceList(resources: ResourceKey[]): string {
  const shown = resources.slice(0, 5).map(describeResource).join(', ');
  return resources.length > 5 ? `${shown} and ${resources.length - 5} more` : shown;
}

function printPlan(session: Session, plan: Plan, dryRun: boolean): void {
  const line = (verb: string, resource: ResourceKey) => `${verb} ${describeResource(resource)}\n`;
  for (const resource of plan.create) session.stdout.write(line(VERBS.create[dryRun ? 1 : 0], resource));
  for (const resource of plan.update) {
    session.stdout.write(line(VERBS.update[dryRun ? 1 : 0], resource));
    for (const { path, before, after } of resource.changes)
      session.stdout.write(`  ${path}: ${shownValue(before)} -> ${shownValue(after)}\n`);
  }
  for (const resource of plan.delete) session.stdout.write(line(VERBS.delete[dryRun ? 1 : 0], resource));
  const counts = `${plan.create.length} to create, ${plan.update.length} to update, ${plan.delete.length} to delete, ${plan.unchanged.length} unchanged`;
  session.stdout.write(
    dryRun
      ? `Dry run: ${counts}; nothing was changed.\n`
      : `${plan.create.length} created, ${plan.update.length} updated, ${plan.delete.length} deleted, ${plan.unchanged.length} unchanged.\n`,
  );
}

/**
 * Deleting resources cannot be undone: the user confirms it on a terminal (or gives --yes).
 * Resolves to false when the user declines.
 */
async function deletionsConfirmed(session: Session, plan: Plan): Promise<boolean> {
  const count = plan.delete.length === 1 ? '1 resource' : `${plan.delete.length} resources`;
  const project = session.settings.project?.value ?? 'the project';
  return confirmedOrYes(
    false,
    `Delete ${count} of project ${project} that the files do not describe (${resourceList(plan.delete)})? This cannot be undone.`,
    `refusing to delete ${count} (${resourceList(plan.delete)})`,
  );
}

/** Sends the set (or only validates it); the server's validation errors are shown by file and document. */
async function installSet(
  project: ProjectSession,
  { specs, origins }: LoadedSpecs,
  dryRun: boolean,
): Promise<void> {
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
    throw new CliError(
      `${problemCount(jsvErrors.length)} in the resources; nothing was installed (${error.code})`,
      describeValidationErrors(jsvErrors, origins),
    );
  }
}

export const deploy: Command = {
  name: 'deploy',
  args: '[DIR]',
  summary: 'Install the resources described by the YAML files of a directory in the project.',
  details:
    'Reads every *.yaml and *.yml file under DIR (default: the current directory), each\n' +
    'holding one or more resource specs separated by ---. Hidden files and directories are\n' +
    'skipped, and so are node_modules directories, what the .gitignore files of DIR and its\n' +
    'subdirectories ignore, and what DIR/.pipewrightignore matches (the same syntax; it\n' +
    'comes last, so it can re-include with !).\n' +
    'A task step with `source: PATH` (relative to its YAML file) is sent with the content of\n' +
    'that file as its `code`.\n\n' +
    'The set replaces the resources of the project: what is missing from it is deleted,\n' +
    'after a confirmation on a terminal; without one (a script), --yes is required.\n' +
    'Updated resources are shown with the fields that change (PATH: BEFORE -> AFTER).\n' +
    'Errors are shown as FILE:DOCUMENT: /POINTER: REASON, documents counted from 1, and\n' +
    'YAML syntax errors as FILE:LINE:COLUMN: REASON.',
  arity: [0, 1],
  options: {
    'dry-run': { type: 'boolean', description: 'validate and show the changes, change nothing' },
    ...YES_OPTION,
    ...JSON_OPTION,
  },
  async run(session, invocation) {
    const dryRun = flag(invocation, 'dry-run');
    const loaded = loadSpecs(invocation.positionals[0] ?? '.');
    const project = await session.project();
    // The changes are computed here, from the resources installed just before sending.
    const installed: Schemas['Resource'][] = [];
    for await (const resource of walk(project.client, '/resources', { size: 100 })) installed.push(resource);
    const plan = planChanges(installed, loaded.specs);
    if (!dryRun && plan.delete.length > 0 && !flag(invocation, 'yes')) {
      // Validated first: nobody should be asked about deletions the server would refuse anyway.
      await installSet(project, loaded, true);
      if (!(await deletionsConfirmed(session, plan))) {
        session.stderr.write('Nothing was changed.\n');
        return 1;
      }
    }
    await installSet(project, loaded, dryRun);
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
