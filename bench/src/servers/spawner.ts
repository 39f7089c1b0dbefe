// Baseline of the process benchmarks: a Node process that only spawns, started afresh for each
// benchmark. Spawning from the benchmark's own process instead made the baseline depend on what
// ran before it: a fork copies the caller's memory, and that process grows over a full run (the
// scheduler's baseline took 465-649 ms after the other benchmarks, 276-488 ms alone).
// Each message `{ argv, count, parallelism }` spawns argv `count` times, `parallelism` at a time,
// and is answered `{ done: true }` once the last has exited.
import { spawn } from 'node:child_process';

interface Request {
  argv: string[];
  count: number;
  parallelism: number;
}

async function spawnMany({ argv, count, parallelism }: Request): Promise<void> {
  const [file = '', ...args] = argv;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      await new Promise<void>((resolve, reject) => {
        const child = spawn(file, args, { stdio: 'ignore' });
        child.once('error', reject);
        child.once('exit', () => resolve());
      });
    }
  };
  await Promise.all(Array.from({ length: parallelism }, worker));
}

process.on('message', (request: Request) => {
  spawnMany(request).then(
    () => process.send?.({ done: true }),
    (error: unknown) => process.send?.({ error: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
