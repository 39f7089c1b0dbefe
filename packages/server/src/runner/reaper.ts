import { type ChildProcessByStdio, spawn, spawnSync } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { DEFAULT_SEARCH_PATH } from './executable.js';

type ReaperProcess = ChildProcessByStdio<Writable, Readable, null>;

/**
 * The reaper's program. For each user id of a line read, a child becomes that user and calls
 * kill(-1, SIGKILL): the kernel signals every process that user may signal while holding the
 * process list, and a process with SIGKILL pending cannot fork, so no child of a dying process,
 * however fast it forks, is left (which a scan of /proc then a kill per pid cannot promise).
 * The child checks it is that user, and not root, before it kills: kill(-1) as root would end
 * every process of the host. It runs nothing but the kill, so groups are left as they are.
 * Answers a line per line: `ok`, or `failed` and the ids it could not do.
 *
 * Perl because Node cannot fork: a process per user spawned by Node costs a copy of the
 * spawning process (about 1 ms), a fork of this small program a tenth of that. It is part of
 * every Debian system (perl-base is essential).
 */
const PROGRAM = `
use strict;
use POSIX ();
$| = 1;
while (my $line = <STDIN>) {
  my @failed;
  for my $uid (split ' ', $line) {
    my $pid = $uid =~ /^[1-9][0-9]{0,9}$/ ? fork() : undef;
    if (!defined $pid) { push @failed, $uid; next; }
    if ($pid == 0) {
      POSIX::setuid($uid);
      POSIX::_exit(1) unless $< == $uid && $> == $uid;
      kill('KILL', -1);
      POSIX::_exit(0);
    }
    waitpid($pid, 0);
    push @failed, $uid if $? != 0;
  }
  print(@failed ? "failed @failed\\n" : "ok\\n");
}
`;

/** Nothing of the server's environment (PERL5OPT, PERL5LIB) reaches the reaper, which runs as root. */
const REAPER_ENVIRONMENT = { PATH: DEFAULT_SEARCH_PATH };

/** Why a reaper cannot run here (no perl with its POSIX module), or undefined when it can. */
export function reaperProblem(): string | undefined {
  const check = spawnSync('perl', ['-MPOSIX', '-e', '1'], {
    env: REAPER_ENVIRONMENT,
    stdio: 'ignore',
    timeout: 10_000,
  });
  return check.status === 0
    ? undefined
    : "perl (with its POSIX module), which ends task users' processes, is missing";
}

/**
 * Kills every process of given users, without a race against processes that fork: see PROGRAM.
 * One reaper process for the server (root), started on first use, again after it died, and
 * ended by close (or with the server: it reads until its input closes).
 */
export function createReaper() {
  let child: ReaperProcess | undefined;
  /** What waits for an answer, in the order the lines were sent. */
  const waiting: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  let received = '';

  const start = (): ReaperProcess => {
    const started = spawn('perl', ['-e', PROGRAM], {
      env: REAPER_ENVIRONMENT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    started.stdout.setEncoding('utf8');
    started.stdout.on('data', (chunk: string) => {
      received += chunk;
      for (let end = received.indexOf('\n'); end >= 0; end = received.indexOf('\n')) {
        const answer = received.slice(0, end);
        received = received.slice(end + 1);
        const next = waiting.shift();
        if (answer === 'ok') next?.resolve();
        else next?.reject(new Error(`the reaper could not end the processes of users: ${answer}`));
      }
    });
    const fail = (error: Error) => {
      if (child === started) child = undefined;
      received = '';
      for (const next of waiting.splice(0)) next.reject(error);
    };
    started.on('error', fail);
    started.on('exit', (code, signal) => fail(new Error(`the reaper ended (${signal ?? code})`)));
    started.stdin.on('error', () => undefined);
    // A reaper waiting for work does not keep the server's process alive.
    started.unref();
    for (const stream of [started.stdin, started.stdout]) (stream as unknown as { unref(): void }).unref();
    return started;
  };

  return {
    /** Resolves once every process of `uids` (user ids other than root's) has been sent SIGKILL. */
    reap(uids: readonly number[]): Promise<void> {
      if (uids.length === 0) return Promise.resolve();
      if (uids.some((uid) => !Number.isInteger(uid) || uid <= 0 || uid >= 2 ** 32)) {
        return Promise.reject(new Error(`not user ids the reaper takes: ${uids.join(' ')}`));
      }
      child ??= start();
      const answered = new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
      child.stdin.write(`${uids.join(' ')}\n`);
      return answered;
    },
    /** Ends the reaper process (once what it was asked is done). */
    close(): void {
      child?.stdin.end();
      child = undefined;
    },
  };
}

export type Reaper = ReturnType<typeof createReaper>;
