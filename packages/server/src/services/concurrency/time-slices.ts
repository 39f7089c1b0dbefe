// A long job on the server's one thread (matching an event against thousands of triggers,
// validating 10,000 specs, creating 10,000 tasks) runs in slices, between which the event
// loop answers other requests: no organization's request waits long for another's job.

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Lets the event loop run what waits (requests, timers) before going on. Two immediates: a job
 * resumed by one from a request's handler runs before the loop looks for input again, which
 * would glue the handler's work to the job's next slice; after two, the loop has looked.
 */
export const nextTurn = async (): Promise<void> => {
  await immediate();
  await immediate();
};

/**
 * The turn of the job that yielded last. Jobs under way at once (four requests' events matched
 * against slow filters) take turns: each resumes a turn after the one that yielded before it,
 * so that between two looks for input the loop runs one slice, not one slice of each job.
 */
let lastTurn: Promise<void> = Promise.resolve();

/**
 * A function to call between the pieces of a long job: it yields a turn of the event loop
 * once `sliceMs` have passed since the job started or last resumed, and resumes after the
 * jobs that yielded before it.
 */
export function timeSlicer(sliceMs = 10): () => Promise<void> {
  let start = performance.now();
  return async () => {
    if (performance.now() - start < sliceMs) return;
    const turn = lastTurn.then(nextTurn);
    lastTurn = turn;
    await turn;
    start = performance.now();
  };
}
