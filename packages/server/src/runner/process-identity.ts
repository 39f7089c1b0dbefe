import { readFileSync } from 'node:fs';

/**
 * Who a process is beyond its pid, which the system reuses: the boot it runs in and when it
 * started (clock ticks since boot, /proc/<pid>/stat field 22), as `<boot id>/<start>`. Linux
 * only; undefined where /proc cannot tell. The spawner process (spawner-child.c) reads it the same
 * way when it reports a step.
 */
export function processIdentity(pid: number): string | undefined {
  const boot = bootId();
  const start = startTime(pid);
  return boot === undefined || start === undefined ? undefined : `${boot}/${start}`;
}

/** This boot's id: a new one after each reboot. Read each time: it is asked only after a crash. */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
  } catch {
    return undefined;
  }
}

/** A file of /proc/<pid>/, undefined when the process is gone (or /proc unreadable). */
export function readProcessFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'latin1');
  } catch {
    return undefined;
  }
}

function startTime(pid: number): string | undefined {
  const stat = readProcessFile(pid, 'stat');
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // afterName[0] is field 3 (state): field 22 is afterName[19].
  return afterName[19];
}

/**
 * Whether a process group recorded as running, led by the process `recorded` names, is still
 * that group, so that killing it after a crash cannot hit another's processes: only when a
 * process of that number runs in this boot with the recorded start time, the very leader.
 * A group whose leader has ended is spared: its number may name a newer group by now (the
 * spawner process kills a step's group when its leader ends, and with the server). Without a
 * recorded identity (steps recorded by an older version) nothing is killed.
 * `leaderNow` is the identity of the process of that number now (undefined when there is none).
 */
export function isRecordedGroup(
  recorded: string | undefined,
  leaderNow: string | undefined,
  currentBootId: string | undefined,
): boolean {
  if (recorded === undefined || leaderNow === undefined) return false;
  return recorded.split('/')[0] === currentBootId && leaderNow === recorded;
}

/** What stopRecordedGroup did. */
export type RecordedGroupStop = 'stopped' | 'spared' | 'gone';

/**
 * Kills a process group recorded as running by a server that died, only while it is still that
 * group (isRecordedGroup): 'spared' when it may not be, 'gone' when it had ended meanwhile.
 */
export function stopRecordedGroup(group: number, identity: string | undefined): RecordedGroupStop {
  if (!isRecordedGroup(identity, processIdentity(group), bootId())) return 'spared';
  try {
    process.kill(-group, 'SIGKILL');
    return 'stopped';
  } catch {
    return 'gone';
  }
}
