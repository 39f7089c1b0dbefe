interface Running {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The tasks running in this process, by id, each with what aborts its run. `onEnded` is told
 * after a run has ended and left them.
 */
export function createRunningTasks(onEnded: () => void) {
  const running = new Map<string, Running>();

  const abort = (taskIds: readonly string[]): void => {
    for (const id of taskIds) running.get(id)?.controller.abort();
  };

  return {
    get size(): number {
      return running.size;
    },
    ids: (): string[] => [...running.keys()],
    /** Runs `run`, which must not reject, for the task until it settles; its signal aborts with abort(). */
    add(taskId: string, run: (signal: AbortSignal) => Promise<void>): void {
      const controller = new AbortController();
      const done = run(controller.signal).finally(() => {
        running.delete(taskId);
        onEnded();
      });
      running.set(taskId, { controller, done });
    },
    abort,
    /** Waits for every run to end, up to the deadline; then aborts those left, and waits for them. */
    async settle(deadlineMs: number): Promise<void> {
      const all = () => Promise.all([...running.values()].map((r) => r.done));
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
