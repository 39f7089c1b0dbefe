/** Which attempt of a task a run is: its run (restarts) and its retry. */
export interface AttemptOf {
  id: string;
  run: number;
  retry: number;
}

interface Running {
  attempt: AttemptOf;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The tasks running in this process, by id, each with the attempt it runs and what aborts its
 * run. `onEnded` is told after a run has ended and left them.
 */
export function createRunningTasks(onEnded: () => void) {
  const running = new Map<string, Running>();

  const abort = (taskIds: readonly string[]): void => {
    for (const id of taskIds) running.get(id)?.controller.abort();
  };
  const all = () => Promise.all([...running.values()].map((r) => r.done));

  return {
    get size(): number {
      return running.size;
    },
    ids: (): string[] => [...running.keys()],
    /** The attempts running. */
    attempts: (): AttemptOf[] => [...running.values()].map((r) => r.attempt),
    /** Runs `run`, which must not reject, for the attempt until it settles; its signal aborts with abort(). */
    add(attempt: AttemptOf, run: (signal: AbortSignal) => Promise<void>): void {
      const controller = new AbortController();
      const done = run(controller.signal).finally(() => {
        running.delete(attempt.id);
        onEnded();
      });
      running.set(attempt.id, { attempt, controller, done });
    },
    abort,
    /** Aborts every run, and waits for them all to end. */
    async abortAll(): Promise<void> {
      abort([...running.keys()]);
      await all();
    },
    /** Waits for every run to end, up to the deadline; then aborts those left, and waits for them. */
    async settle(deadlineMs: number): Promise<void> {
      const deadline = new Promise<'late'>((resolve) =>
        setTimeout(() => resolve('late'), deadlineMs).unref(),
      );
      if ((await Promise.race([all(), deadline])) === 'late') {
        abort([...running.keys()]);
        await all();
      }
    },
  };
}
