import type { ApiClient, Schemas } from '@pipewright/client';
import { type TestServer, uniqueName } from './test-server.js';
import { waitFor } from './wait.js';

type Spec = Schemas['ResourceSpec'];

/** A fresh project with `specs` installed, and a client whose requests go to it. */
export async function projectWith(server: TestServer, specs: unknown[], apiKey = server.adminKey) {
  const admin = server.client(apiKey);
  const { data: project } = await admin.POST('/projects', { body: { name: uniqueName('p') } });
  if (!project) throw new Error('no project');
  await admin.PUT('/projects/id/{id}/resources', {
    params: { path: { id: project.id } },
    body: { specs: specs as Spec[] },
  });
  return { project, client: server.client(apiKey, project.id) };
}

/** Spec builders: the smallest valid resources, completed by `extra`. */
export const task = (name: string, data: Record<string, unknown>) => ({
  type: 'task',
  version: 1,
  name,
  data,
});
export const pipeline = (
  name: string,
  tasks: Record<string, unknown>[],
  extra: Record<string, unknown> = {},
) => ({
  type: 'pipeline',
  version: 1,
  name,
  data: { tasks, ...extra },
});
export const command = (name: string, pipelines: string[], parameters: Record<string, unknown>[] = []) => ({
  type: 'command',
  version: 1,
  name,
  data: { parameters, pipelines },
});
export const trigger = (
  name: string,
  event: string,
  pipelines: string[],
  filters?: Record<string, unknown>[],
) => ({
  type: 'trigger',
  version: 1,
  name,
  data: { connector: 'custom', event, pipelines, ...(filters ? { filters } : {}) },
});

export async function resourceId(client: ApiClient, type: Spec['type'], name: string): Promise<string> {
  const { data } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type, name } },
  });
  if (!data) throw new Error(`no ${type} ${name}`);
  return data.id;
}

/** Executes the command `name` of the client's project; returns the id of its first pipeline. */
export async function execute(
  client: ApiClient,
  name: string,
  parameters: Record<string, string | number | boolean> = {},
): Promise<string> {
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', name) } },
    body: { parameters },
  });
  return data?.pipeline_ids[0] ?? '';
}

/** Parameters of a command taking `values`: each of its value's type, in the variable of its name in capitals. */
export const parametersFor = (values: Record<string, string | number | boolean>) =>
  Object.entries(values).map(([name, value]) => ({
    name,
    type: typeof value,
    environment: name.toUpperCase(),
  }));

/**
 * A fresh project with `specs` and a command `go` starting pipeline `main`, which it executes
 * with `parameters` (see parametersFor): the project, a client working in it, and the
 * pipeline's id.
 */
export async function startMain(
  server: TestServer,
  specs: unknown[],
  parameters: Record<string, string | number | boolean> = {},
) {
  const { project, client } = await projectWith(server, [
    ...specs,
    command('go', ['main'], parametersFor(parameters)),
  ]);
  return { project, client, pipelineId: await execute(client, 'go', parameters) };
}

const FINAL = new Set(['successful', 'failed', 'aborted']);

/** Waits (bounded) until the pipeline reaches a final status, and returns it. */
export async function finished(client: ApiClient, pipelineId: string, timeoutMs?: number) {
  const pipeline = await waitFor(
    async () => (await client.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } })).data,
    (read) => read !== undefined && FINAL.has(read.status),
    timeoutMs,
  );
  if (!pipeline) throw new Error(`no pipeline ${pipelineId}`);
  return pipeline;
}

export async function tasksOf(client: ApiClient, pipelineId: string) {
  const { data } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId, size: 100 } } });
  return data?.elements ?? [];
}

export async function stepsOf(client: ApiClient, taskId: string) {
  const { data } = await client.GET('/tasks/id/{id}/steps', { params: { path: { id: taskId } } });
  return data ?? [];
}
