import { type Schemas, walk } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { InstallationTarget } from '../../src/store/index.js';
import { pipeline, projectWith, task, trigger } from '../helpers/projects.js';
import { startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';

// An installation writes its changes hidden from readers, a slice at a time, and one small
// transaction shows them all (store/resources.store.ts, migration 019). Triggers, which other
// queries read, are written by that transaction itself.

type Resource = Schemas['Resource'];
type Spec = Schemas['ResourceSpec'];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const noop = (name: string) => task(name, { steps: [{ command: 'true' }] }) as Spec;

async function resourcesOf(projectId: string): Promise<Resource[]> {
  const all: Resource[] = [];
  for await (const resource of walk(server.client(undefined, projectId), '/resources', { size: 100 }))
    all.push(resource);
  return all;
}

/** `type/name` of each resource, sorted. */
const keys = (resources: readonly { spec: { type: string; name: string } }[]) =>
  resources.map((r) => `${r.spec.type}/${r.spec.name}`).sort();

function install(projectId: string, specs: unknown[]) {
  return server.client().PUT('/projects/id/{id}/resources', {
    params: { path: { id: projectId } },
    body: { specs: specs as Spec[] },
  });
}

/**
 * A project with tasks `build` and `test`, and an installation of it begun by hand, as the
 * server's would be: `ghost` created, `build` changed, `test` deleted, all written hidden.
 */
async function projectWithHiddenChanges() {
  const { project } = await projectWith(server, [noop('build'), noop('test')]);
  const before = await resourcesOf(project.id);
  const id = (name: string) => before.find((r) => r.spec.name === name)?.id ?? '';
  const target: InstallationTarget = {
    installation: newId(),
    project_id: project.id,
    org_id: project.org_id,
    time: new Date(Date.now() + 60_000).toISOString(),
  };
  const changed = task('build', { steps: [{ command: 'false' }] }) as Spec;
  await server.store.transaction(async (tx) => {
    await tx.resources.beginInstallation(target);
    await tx.resources.writeHidden(target, [
      { change: 'create', id: newId(), spec: noop('ghost') },
      { change: 'update', id: id('build'), spec: changed },
      { change: 'delete', id: id('test') },
    ]);
  });
  return { project, before, target, changed };
}

describe('installResources, a slice at a time', () => {
  it('shows the triggers of a set with the rest: what reads triggers never sees one before its pipeline', async () => {
    const { project, client } = await projectWith(server, []);
    const event = uniqueName('push');
    // Enough tasks to be written over several slices after them, a pipeline, and two triggers
    // starting it: one by events, one by time (whose store reads the table of resources itself).
    const set = [
      pipeline('ci', [{ task: 't0' }]),
      trigger('on-push', event, ['ci']),
      {
        type: 'trigger',
        version: 1,
        name: 'hourly',
        data: { connector: 'time', event: 'tick', parameters: { periodic: 3600 }, pipelines: ['ci'] },
      },
      ...Array.from({ length: 3000 }, (_, i) => noop(`t${i}`)),
    ];
    let done = false;
    const installing = install(project.id, set).finally(() => {
      done = true;
    });
    const pipelineShown = async () =>
      (await server.store.resources.getByTypeAndName(project.id, 'pipeline', 'ci')) !== undefined;
    const timeTriggerShown = async () =>
      (await server.store.triggerSchedules.list()).some((t) => t.project_id === project.id);
    // Each event finds no trigger, or the trigger and its pipeline (it would fail to start a
    // pipeline not shown yet); the time trigger shows with the pipeline, not before.
    const started: number[] = [];
    let sentDuring = 0;
    while (!done) {
      expect(!(await timeTriggerShown()) || (await pipelineShown())).toBe(true);
      const { data } = await client.POST('/events', { body: { connector: 'custom', name: event, data: {} } });
      started.push(data?.length ?? 0);
      if (!done) sentDuring += 1;
    }
    await installing;
    expect(sentDuring).toBeGreaterThan(0);
    expect(started.slice(started.indexOf(1))).not.toContain(0);
    expect((await timeTriggerShown()) && (await pipelineShown())).toBe(true);
    const { data } = await client.POST('/events', { body: { connector: 'custom', name: event, data: {} } });
    expect(data).toHaveLength(1);
    expect(await server.store.resources.unfinishedInstallations(project.id)).toEqual([]);
  });

  it('hides an installation cut short before it was applied, and the next one undoes it first', async () => {
    const { project, before } = await projectWithHiddenChanges();
    expect(await resourcesOf(project.id)).toEqual(before);
    const client = server.client(undefined, project.id);
    await expect(
      client.GET('/resources/type/{type}/name/{name}', { params: { path: { type: 'task', name: 'ghost' } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_resource' });
    // `ghost` again, a name the hidden row holds until it is undone.
    const set = [noop('build'), noop('ghost')];
    expect((await install(project.id, set)).response.status).toBe(204);
    const after = await resourcesOf(project.id);
    expect(keys(after)).toEqual(['task/build', 'task/ghost']);
    expect(after.find((r) => r.spec.name === 'build')).toEqual(before.find((r) => r.spec.name === 'build'));
    expect(await server.store.resources.unfinishedInstallations(project.id)).toEqual([]);
  });

  it('shows an installation applied before a crash folded it, and the next one folds it first', async () => {
    const { project, before, target, changed } = await projectWithHiddenChanges();
    await server.store.transaction((tx) => tx.resources.applyInstallation(target.installation));
    const applied = await resourcesOf(project.id);
    expect(keys(applied)).toEqual(['task/build', 'task/ghost']);
    const build = applied.find((r) => r.spec.name === 'build');
    expect(build).toEqual({
      ...before.find((r) => r.spec.name === 'build'),
      spec: changed,
      update_time: target.time,
    });
    // A set that changes nothing of it: what readers see stays, now folded into the rows.
    expect(
      (
        await install(
          project.id,
          applied.map((r) => r.spec),
        )
      ).response.status,
    ).toBe(204);
    expect(await resourcesOf(project.id)).toEqual(applied);
    expect(await server.store.resources.unfinishedInstallations(project.id)).toEqual([]);
  });
});
