/**
 * Streams served in one go (written to, woken, checked) before the server's other work gets a turn
 * of the event loop: 1-2 ms of writes. A project with thousands of open streams then does not hold
 * the thread that answers everyone else's requests for the whole of each fan-out.
 */
export const STREAMS_PER_TURN = 100;

/** Whether a loop that has served `served` streams lets other work run before the next. */
export const turnIsOver = (served: number) => served > 0 && served % STREAMS_PER_TURN === 0;
