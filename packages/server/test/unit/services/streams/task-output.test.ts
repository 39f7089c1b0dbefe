import { describe, expect, it } from 'vitest';
import { type OutputReads, sharedReads } from '../../../../src/services/streams/task-output.js';
import { BEFORE_FIRST_CHUNK, type ChunkKey } from '../../../../src/store/index.js';

/** Reads that count how often each is made, and answer with what identifies the call. */
function countedReads() {
  const made: string[] = [];
  const reads: OutputReads = {
    task: async () => {
      made.push('task');
      return undefined;
    },
    anyRunning: async () => {
      made.push('anyRunning');
      return true;
    },
    after: async (key, limit) => {
      made.push(`after ${key.seq} ${limit}`);
      return [{ ...key, seq: key.seq + 1, text: `after ${key.seq}`, bytes: 8 }];
    },
  };
  return { reads, made };
}

describe('output reads shared by the streams of a task', () => {
  it('makes each read once, when first asked for, and answers every stream with it', async () => {
    const { reads, made } = countedReads();
    const shared = sharedReads(reads);
    expect(made).toEqual([]);
    const second: ChunkKey = { run: 1, attempt: 1, step_index: 0, seq: 2 };
    const answers = await Promise.all(
      Array.from({ length: 3 }, async () => [
        await shared.task(),
        await shared.anyRunning(),
        await shared.after(BEFORE_FIRST_CHUNK, 64),
        await shared.after(second, 64),
        await shared.after(second, 1),
      ]),
    );
    expect(made).toEqual(['task', 'anyRunning', 'after -1 64', 'after 2 64', 'after 2 1']);
    // The same chunks, not copies: a chunk's message is then made once for all.
    expect(answers[1]?.[2]).toBe(answers[0]?.[2]);
    expect(answers[2]?.[3]).toBe(answers[0]?.[3]);
    expect(answers[0]?.[3]).not.toBe(answers[0]?.[4]);
  });
});
