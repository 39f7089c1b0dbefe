import type { Schemas } from '@pipewright/types';
import type { Runtime, TaskTimeout } from '../runner/index.js';

type Task = Schemas['Task'];

/** Where the task's steps run, as the runner takes it: its spec's runtime, defaults filled. */
export function runtimeOf(task: Task): Runtime {
  const runtime = task.spec.data.runtime;
  if (runtime?.name !== 'container') return { name: 'local' };
  const parameters = runtime.parameters;
  // Installs require an image for the container runtime.
  if (!parameters?.image) throw new Error('the container runtime has no image');
  return {
    name: 'container',
    image: parameters.image,
    pull: parameters.pull ?? 'missing',
    memoryMib: parameters.memory,
    cpus: parameters.cpus,
    network: parameters.network ?? true,
  };
}

/** An attempt's time: the task's own timeout, else the server's default, if any. */
export function timeoutOf(task: Task, serverDefault: number | undefined): TaskTimeout | undefined {
  const own = task.spec.data.timeout;
  if (own !== undefined) return { seconds: own, source: 'task' };
  return serverDefault === undefined ? undefined : { seconds: serverDefault, source: 'server' };
}
