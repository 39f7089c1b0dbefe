/** The reason of a signal aborted by a timeout: which timeout passed, and how long it was. */
export class TimeoutPassed {
  /** `timeout` names it with its length: "the step's timeout of 1 s". */
  constructor(readonly timeout: string) {}
}

export interface TimedSignal {
  signal: AbortSignal;
  /** Stops the timer and stops following the parent: call it once the signal is no longer used. */
  clear(): void;
}

/**
 * A signal that aborts when `parent` does (with its reason), and also once `seconds` have passed,
 * with a TimeoutPassed as its reason. A step run with it is stopped by a timeout exactly as by an
 * abort. Without `seconds`, `parent` itself.
 */
export function withTimeout(parent: AbortSignal, seconds: number | undefined, name: string): TimedSignal {
  if (seconds === undefined) return { signal: parent, clear: () => {} };
  const controller = new AbortController();
  const follow = () => controller.abort(parent.reason);
  // Timeouts are at most 7 days (the spec's bound), well within what setTimeout can wait.
  const timer = setTimeout(
    () => controller.abort(new TimeoutPassed(`${name} of ${formatSeconds(seconds)}`)),
    seconds * 1000,
  );
  if (parent.aborted) follow();
  else parent.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent.removeEventListener('abort', follow);
    },
  };
}

/** The timeout that aborted `signal`, if a timeout did. */
export function passedTimeout(signal: AbortSignal): TimeoutPassed | undefined {
  return signal.reason instanceof TimeoutPassed ? signal.reason : undefined;
}

/** "45 s", "90 min", "6 h": a whole number of the largest unit that divides it. */
export function formatSeconds(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
