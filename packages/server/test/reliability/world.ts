import { type Schemas, setScratchpadEntry } from '@pipewright/client';
import { finished, tasksOf } from '../helpers/projects.js';
import { type TestServer, uniqueName } from '../helpers/test-server.js';
import type { RawRequest } from './http.js';
import { OPERATIONS, type Operation, pathOf } from './spec.js';

// One organization's objects, one of each kind the API has, and a valid request of every
// operation of the spec aimed at them: tests derive bad requests from these, and check
// that other organizations never see any of it.

export interface World {
  apiKey: string;
  orgId: string;
  orgName: string;
  /** The email address of the account of `apiKey`. */
  email: string;
  project: Schemas['Project'];
  /** The object each route's `{id}` designates, by the first segment of its path. */
  ids: Record<string, string>;
  scratchpad: { key: string; value: string };
  /** A command without parameters whose pipeline runs one short task, successfully. */
  quickCommandId: string;
  /** The identifier of the webhook of a trigger of the world, signed and without its secret. */
  hookId: string;
  /**
   * Identifiers and unique names of the world (organization, account, project, resources,
   * pipeline, task, event, execution, scratchpad entry): text no other organization may read.
   */
  secrets: string[];
}

const PROJECT_HEADER = 'x-service-project-id';

function exampleOf(id: string): unknown {
  const operation = OPERATIONS.find((o) => o.id === id);
  if (!operation?.body) throw new Error(`${id} has no example body`);
  return operation.body.example;
}

/**
 * Builds a world in the organization of `apiKey`: a project, its resources (and `extraSpecs`),
 * a run of a pipeline.
 */
export async function buildWorld(
  server: TestServer,
  apiKey: string,
  extraSpecs: Schemas['ResourceSpec'][] = [],
): Promise<World> {
  const admin = server.client(apiKey);
  const { data: account } = await admin.GET('/account');
  const { data: organization } = await admin.GET('/org');
  const { data: project } = await admin.POST('/projects', { body: { name: uniqueName('world') } });
  if (!account || !organization || !project) throw new Error('no world');
  const client = server.client(apiKey, project.id);
  // The spec's own example set (the baseline of bad install requests), and a pipeline that
  // runs at once, to have a pipeline, a task, an event and an execution to point at.
  const example = exampleOf('installResources') as { specs: Schemas['ResourceSpec'][] };
  const quick: Schemas['ResourceSpec'][] = [
    { type: 'task', version: 1, name: 'quick', data: { steps: [{ code: 'echo done' }] } },
    { type: 'pipeline', version: 1, name: 'quick', data: { tasks: [{ task: 'quick' }] } },
    { type: 'command', version: 1, name: 'quick', data: { parameters: [], pipelines: ['quick'] } },
    // Its deliveries are refused until a secret is set: the requests of tests start nothing.
    {
      type: 'trigger',
      version: 1,
      name: 'quick-hook',
      data: { connector: 'webhook', event: 'push', pipelines: ['quick'] },
    },
  ];
  await admin.PUT('/projects/id/{id}/resources', {
    params: { path: { id: project.id } },
    body: { specs: [...example.specs, ...quick, ...extraSpecs] },
  });
  const { data: resources } = await client.GET('/resources', { params: { query: { size: 100 } } });
  const idOf = (type: string, name: string) =>
    resources?.elements.find((r) => r.spec.type === type && r.spec.name === name)?.id ?? '';
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: idOf('command', 'quick') } },
    body: {},
  });
  const pipelineId = execution?.pipeline_ids[0] ?? '';
  const { data: webhook } = await client.GET('/triggers/id/{id}/webhook', {
    params: { path: { id: idOf('trigger', 'quick-hook') } },
  });
  await finished(client, pipelineId);
  const [task] = await tasksOf(client, pipelineId);
  const scratchpad = { key: uniqueName('key'), value: uniqueName('value') };
  await setScratchpadEntry(client, pipelineId, scratchpad.key, scratchpad.value);
  // Named `build` as the task, so that a route by name finds it (pathValuesOf).
  const identityValue = uniqueName('identity-value');
  const { data: identity } = await client.POST('/identities', {
    body: { name: 'build', kind: 'secret', data: { value: identityValue } },
  });
  // A key of its own: a request the matrices send may revoke it, never the world's.
  const { data: spareKey } = await admin.POST('/api_keys', { body: {} });
  const ids = {
    accounts: account.id,
    api_keys: spareKey?.id ?? '',
    identities: identity?.id ?? '',
    projects: project.id,
    resources: idOf('task', 'build'),
    commands: idOf('command', 'deploy'),
    command_executions: execution?.id ?? '',
    pipelines: pipelineId,
    tasks: task?.id ?? '',
    events: execution?.event_id ?? '',
    triggers: idOf('trigger', 'quick-hook'),
  };
  return {
    apiKey,
    orgId: organization.id,
    orgName: organization.name,
    email: account.email_address,
    project,
    ids,
    scratchpad,
    quickCommandId: idOf('command', 'quick'),
    hookId: webhook?.hook_id ?? '',
    secrets: [
      organization.id,
      organization.name,
      account.email_address,
      project.name,
      ...Object.values(ids),
      ...(resources?.elements.map((r) => r.id) ?? []),
      scratchpad.key,
      scratchpad.value,
      webhook?.hook_id ?? '',
      identityValue,
      spareKey?.key ?? '',
    ],
  };
}

/** The values of `operation`'s path parameters that designate the world's objects. */
export function pathValuesOf(operation: Operation, world: World): Record<string, string> {
  const collection = operation.path.split('/')[1] ?? '';
  const projectRoute = collection === 'projects';
  return {
    id: world.ids[collection] ?? '',
    name: projectRoute ? world.project.name : 'build',
    type: 'task',
    key: encodeURIComponent(world.scratchpad.key),
    hook_id: world.hookId,
  };
}

/** A request of `operation` that the spec accepts, aimed at the world, with the world's key. */
export function validRequest(operation: Operation, world: World): RawRequest {
  const headers: Record<string, string> = { authorization: `Bearer ${world.apiKey}` };
  if (operation.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === PROJECT_HEADER)) {
    headers[PROJECT_HEADER] = world.project.id;
  }
  const request: RawRequest = {
    method: operation.method,
    path: pathOf(operation, pathValuesOf(operation, world)),
    headers,
  };
  if (operation.body) {
    const { mediaType, example } = operation.body;
    headers['content-type'] = mediaType;
    request.body = mediaType === 'application/json' ? JSON.stringify(example) : String(example);
  }
  return request;
}
