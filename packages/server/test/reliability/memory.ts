import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const MIB = 1024 * 1024;

/** The memory of this process after a full garbage collection, in MiB. */
export function memoryAfterGc(): { rssMiB: number; heapMiB: number } {
  collectGarbage();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMiB: rss / MIB, heapMiB: heapUsed / MIB };
}
