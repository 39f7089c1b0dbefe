import type { Schemas } from '@pipewright/types';
import { parameterEnvironment, withDefaults } from '../domain/execution/parameter-values.js';
import { CONTAINER_PATHS, type PreparedAttempt } from '../runner/index.js';
import type { RevealedIdentity } from '../services/index.js';
import { identityEnvironment } from './task-identities.js';

type Task = Schemas['Task'];

/** Where tasks find programs: the environment is clean, so PATH is set, not inherited. */
export const TASK_PATH = '/usr/local/bin:/usr/bin:/bin';

/** How tasks reach the server, known once it listens. */
export interface ServerAccess {
  /** What tasks get as PIPEWRIGHT_API_URL: the server, without /v0. */
  apiUrl: string;
  /** The server's certificate file, when self-signed. */
  caFile?: string | undefined;
}

export interface TaskContext {
  task: Task;
  project: Schemas['Project'];
  /** Variables of the pipeline's command parameters. */
  pipelineEnvironment: Record<string, string>;
  attempt: PreparedAttempt;
  apiUrl: string;
  apiKey: string;
  /** The server's certificate when it is self-signed. */
  caFile?: string | undefined;
  /** Programs the server gives its tasks (its `pipewright`): a directory first on their PATH. */
  binDir?: string | undefined;
  /**
   * Steps run in containers, where the attempt's files are mounted at CONTAINER_PATHS: the
   * variables name those paths, and the image's PATH applies (the host's programs are not there).
   */
  inContainer?: boolean;
  /** The identities the task names, with their values: they give it variables (task-identities.ts). */
  identities?: readonly RevealedIdentity[] | undefined;
}

/** The parameter values of a task instance: those its pipeline entry gives, then defaults. */
export function taskParameters(task: Task): Record<string, Schemas['ParameterValue']> {
  return withDefaults(task.spec.data.parameters ?? [], task.pipeline_task.parameters ?? {});
}

/**
 * The whole environment of the task's processes. Later sources win: the task's own
 * `environment`, then its command's and its own parameter variables, then its identities', then the platform's
 * PIPEWRIGHT_* variables, which a resource cannot override.
 */
export function taskEnvironment(context: TaskContext): Record<string, string> {
  const { task, project } = context;
  const places = context.inContainer ? CONTAINER_PATHS : context.attempt;
  const caFile = context.caFile && (context.inContainer ? CONTAINER_PATHS.caFile : context.caFile);
  const ca: Record<string, string> = caFile
    ? {
        PIPEWRIGHT_CA_FILE: caFile,
        NODE_EXTRA_CA_CERTS: caFile,
        SSL_CERT_FILE: caFile,
        CURL_CA_BUNDLE: caFile,
      }
    : {};
  return {
    ...(context.inContainer ? {} : { PATH: context.binDir ? `${context.binDir}:${TASK_PATH}` : TASK_PATH }),
    HOME: places.workDir,
    TMPDIR: places.tmpDir,
    ...task.spec.data.environment,
    ...context.pipelineEnvironment,
    ...parameterEnvironment(task.spec.data.parameters ?? [], taskParameters(task)),
    ...identityEnvironment(context.identities ?? [], places.tmpDir),
    PIPEWRIGHT_PROJECT_ID: project.id,
    PIPEWRIGHT_PROJECT_NAME: project.name,
    PIPEWRIGHT_PIPELINE_ID: task.pipeline_id,
    PIPEWRIGHT_TASK_ID: task.id,
    PIPEWRIGHT_INSTANCE_ID: String(task.instance_id),
    PIPEWRIGHT_API_URL: context.apiUrl,
    PIPEWRIGHT_API_KEY: context.apiKey,
    PIPEWRIGHT_CONTEXT_PATH: places.contextPath,
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
