import { type ApiClient, type Schemas, taskOutput } from '@pipewright/client';
import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';

type Step = Schemas['StepExecution'];
type Task = Schemas['Task'];

/** Output that arrives within this time is shown together: one render per batch, not per line. */
const BATCH_MS = 100;

/** A step execution's place in a task: its run, attempt and step. */
const executionKey = (step: { run: number; attempt: number; index: number }) =>
  `${step.run}/${step.attempt}/${step.index}`;

/** What changes the step executions of a task: its status, run and attempt. */
const taskState = (task: Task) => `${task.status}/${task.run}/${task.retry}`;

const utf8Length = (text: string) => new TextEncoder().encode(text).length;

interface Streamed {
  taskId: string;
  /** The output of each step execution when the stream opened, which it continues. */
  before: Record<string, string>;
  /** Output streamed since, by step execution. */
  texts: Record<string, string>;
}

/**
 * The output of a task's steps as they print it. Once the step executions are first read, the
 * task's output stream (`GET /tasks/id/{id}/output`) opens where their output ends (the offset
 * is the byte length of it all, as the API defines it) and adds what comes. A step that has not
 * been read yet, a change of the task's status and the stream's end have the step executions
 * read again (`['task', id, 'steps']`), so their statuses and exit codes follow too.
 */
export function useTaskOutput(
  client: ApiClient,
  taskId: string,
  steps: Step[] | undefined,
): { outputOf(step: Step): string; error: unknown } {
  const queries = useQueryClient();
  const [streamed, setStreamed] = useState<Streamed>();
  const [error, setError] = useState<unknown>();
  // The latest step executions, read by the stream without reopening it.
  const latest = useRef(steps);
  latest.current = steps;
  const ready = steps !== undefined;

  useEffect(() => {
    if (!ready) return;
    const first = latest.current ?? [];
    const offset = first.reduce((sum, step) => sum + utf8Length(step.output), 0);
    let pending: Streamed = {
      taskId,
      before: Object.fromEntries(first.map((step) => [executionKey(step), step.output])),
      texts: {},
    };
    setStreamed(pending);
    setError(undefined);
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const show = () => {
      timer = undefined;
      setStreamed({ ...pending, texts: { ...pending.texts } });
    };
    const asked = new Set<string>();
    const readSteps = () => void queries.invalidateQueries({ queryKey: ['task', taskId, 'steps'] });
    (async () => {
      try {
        for await (const message of taskOutput(client, taskId, offset, { signal: controller.signal })) {
          if (message.event === 'start' && message.data.reset) {
            // The offset is past the output the server has: it sends all of it again, from 0.
            pending = { taskId, before: {}, texts: {} };
          } else if (message.event === 'output') {
            const key = executionKey(message.data);
            pending.texts[key] = (pending.texts[key] ?? '') + message.data.text;
            const known = latest.current?.some((step) => executionKey(step) === key);
            if (!known && !asked.has(key)) {
              asked.add(key);
              readSteps();
            }
          } else if (message.event === 'task') {
            // Sent first as it is, then on each change: the steps are read again on a change.
            const shown = queries.getQueryData<Task>(['task', taskId]);
            if (!shown || taskState(shown) !== taskState(message.data)) readSteps();
            queries.setQueryData(['task', taskId], message.data);
          } else if (message.event === 'end') {
            readSteps();
          }
          timer ??= setTimeout(show, BATCH_MS);
        }
      } catch (failure) {
        setError(failure);
      }
    })();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [client, taskId, ready, queries]);

  const outputOf = useCallback(
    (step: Step) => {
      if (streamed?.taskId !== taskId) return step.output;
      const key = executionKey(step);
      const live = (streamed.before[key] ?? '') + (streamed.texts[key] ?? '');
      // Both are the beginning of the same output: the longer one is the more recent.
      return live.length > step.output.length ? live : step.output;
    },
    [streamed, taskId],
  );
  return { outputOf, error };
}
