import type { Schemas } from '@pipewright/types';
import { parameterEnvironment, withDefaults } from '../domain/parameter-values.js';
import type { Attempt } from './attempt-directories.js';

type Task = Schemas['Task'];

/** Where tasks find programs: the environment is clean, so PATH is set, not inherited. */
export const TASK_PATH = '/usr/local/bin:/usr/bin:/bin';

export interface TaskContext {
  task: Task;
  project: Schemas['Project'];
  /** Variables of the pipeline's command parameters. */
  pipelineEnvironment: Record<string, string>;
  attempt: Attempt;
  apiUrl: string;
  apiKey: string;
  /** The server's certificate when it is self-signed. */
  caFile?: string | undefined;
  /** Programs the server gives its tasks (its `pipewright`): a directory first on their PATH. */
  binDir?: string | undefined;
}

/** The parameter values of a task instance: those its pipeline entry gives, then defaults. */
export function taskParameters(task: Task): Record<string, Schemas['ParameterValue']> {
  return withDefaults(task.spec.data.parameters ?? [], task.pipeline_task.parameters ?? {});
}

/**
 * The whole environment of the task's processes. Later sources win: the task's own
 * `environment`, then its command's and its own parameter variables, then the platform's
 * PIPEWRIGHT_* variables, which a resource cannot override.
 */
export function taskEnvironment(context: TaskContext): Record<string, string> {
  const { task, project, attempt } = context;
  const ca: Record<string, string> = context.caFile
    ? {
        PIPEWRIGHT_CA_FILE: context.caFile,
        NODE_EXTRA_CA_CERTS: context.caFile,
        SSL_CERT_FILE: context.caFile,
        CURL_CA_BUNDLE: context.caFile,
      }
    : {};
  return {
    PATH: context.binDir ? `${context.binDir}:${TASK_PATH}` : TASK_PATH,
    HOME: attempt.workDir,
    TMPDIR: attempt.tmpDir,
    ...task.spec.data.environment,
    ...context.pipelineEnvironment,
    ...parameterEnvironment(task.spec.data.parameters ?? [], taskParameters(task)),
    PIPEWRIGHT_PROJECT_ID: project.id,
    PIPEWRIGHT_PROJECT_NAME: project.name,
    PIPEWRIGHT_PIPELINE_ID: task.pipeline_id,
    PIPEWRIGHT_TASK_ID: task.id,
    PIPEWRIGHT_INSTANCE_ID: String(task.instance_id),
    PIPEWRIGHT_API_URL: context.apiUrl,
    PIPEWRIGHT_API_KEY: context.apiKey,
    PIPEWRIGHT_CONTEXT_PATH: attempt.contextPath,
    ...ca,
  };
}

/** The JSON file at PIPEWRIGHT_CONTEXT_PATH: the task's event, parameters and identities. */
export function contextDocument(task: Task, event: Schemas['Event']) {
  return {
    event,
    task_parameters: taskParameters(task),
    instance_id: task.instance_id,
    identities: task.task_identities,
  };
}
