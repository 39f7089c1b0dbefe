/** What services tell the scheduler; the scheduler implements it. */
export interface WorkNotifier {
  /** New runnable work may exist: look for it now. */
  wakeUp(): void;
  /** These tasks were aborted in the store: stop their processes. */
  stopTasks(taskIds: readonly string[]): void;
}

/** What services tell the ticker of time triggers; the ticker implements it. */
export interface ScheduleNotifier {
  /** Triggers were created, changed or deleted: plan their ticks now, not at the next pass. */
  schedulesChanged(): void;
}
