import type { RunningServer } from '@pipewright/testing';

// The real server program (built before these tests: apps/cli/turbo.json) and `it` with its
// `server` fixture, shared by the tests of a file.
export { type RunningServer, startServer, test as it } from '@pipewright/testing';

let counter = 0;
/** A name no other test uses. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/** A new project with these resources installed, and a client working in it. */
export async function projectWith(server: RunningServer, specs: unknown[] = []) {
  const { data: project } = await server.client().POST('/projects', { body: { name: uniqueName('p') } });
  if (!project) throw new Error('no project');
  if (specs.length > 0) {
    await server.client().PUT('/projects/id/{id}/resources', {
      params: { path: { id: project.id } },
      // Test specs are plain objects; the server validates them.
      body: { specs: specs as never[] },
    });
  }
  return { project, client: server.client(project.id) };
}
