import { type ChildProcessByStdio, spawn, spawnSync } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { DEFAULT_SEARCH_PATH } from './executable.js';

type ReaperProcess = ChildProcessByStdio<Writable, Readable, null>;

/**
 * The reaper's program. For each line of user ids read, a child reaps them one after the other:
 * it takes the user as its effective id and calls kill(-1, SIGKILL), with which the kernel
 * signals every process that user may signal while holding the process list; a process with
 * SIGKILL pending cannot fork, so no child of a dying process, however fast it forks, is left
 * (which a scan of /proc then a kill per pid cannot promise). Then it takes root back as its
 * effective id, for the next user.
 *
 * The child's real id is the reaper's own user (OWN, given by the server: one no process has)
 * and its saved id root's: the kernel lets a process signal another whose real or saved id is
 * its own real or effective one, so the child's kill reaches the user's processes (and OWN's, of
 * which there are none), while they cannot signal the child (to stop it before it kills them or
 * the users after them), nor trace it, whose saved id is not theirs. Being its effective id,
 * they may lower its priority meanwhile: that slows this one batch, as the child ends with it.
 * Before each kill it checks its ids and its effective capabilities (none) in /proc/self/status,
 * so that a kill(-1) as root, or with CAP_KILL kept across the change of ids (as securebits can
 * say), which would end every process of the host, cannot happen. It runs nothing but the kills: its
 * groups are left as they are. Answers a line per line: `ok`, or `failed` and the ids it could
 * not do (those the child did not report done).
 *
 * Perl because Node cannot fork: a process spawned by Node costs a copy of the spawning process,
 * a fork of this small program a fraction of that, and one fork per batch rather than per user
 * keeps it off a busy machine (bench/README.md has the figures). It is part of every Debian
 * system (perl-base is essential).
 */
const PROGRAM = `
use strict;
use POSIX ();
$| = 1;
my $own = shift @ARGV;
while (my $line = <STDIN>) {
  my @uids = split ' ', $line;
  my %done;
  my ($from_child, $to_parent);
  my $pid = pipe($from_child, $to_parent) ? fork() : undef;
  if (defined $pid && $pid == 0) {
    close $from_child;
    $< = $own;
    for my $uid (@uids) {
      next unless $uid =~ /^[1-9][0-9]{0,9}$/ && $uid != $own;
      $> = $uid;
      if (open(my $status, '<', '/proc/self/status')) {
        my @lines = <$status>;
        my ($ids) = grep { /^Uid:/ } @lines;
        my ($capabilities) = grep { /^CapEff:/ } @lines;
        if (defined $ids && $ids =~ /^Uid:\\s+$own\\s+$uid\\s+0\\s+$uid\\s*$/
            && defined $capabilities && $capabilities =~ /^CapEff:\\s+0+\\s*$/) {
          kill('KILL', -1);
          print $to_parent "$uid\\n";
        }
      }
      $> = 0;
    }
    # Buffered, and written at once by the close (POSIX::_exit flushes nothing): the reaper wakes
    # once per batch, not once per user. What a child killed midway did not write is reaped again.
    close $to_parent;
    POSIX::_exit(0);
  }
  if (defined $pid) {
    close $to_parent;
    while (my $uid = <$from_child>) { chomp $uid; $done{$uid} = 1; }
    waitpid($pid, 0);
  }
  my @failed = grep { !$done{$_} } @uids;
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

const isUserId = (uid: number) => Number.isInteger(uid) && uid > 0 && uid < 2 ** 32 - 1;

/**
 * Kills every process of given users, without a race against processes that fork: see PROGRAM.
 * `ownUid` is a user id no process has, the reaper's alone (never reaped). One reaper process
 * for the server (root), started on first use, again after it died, and ended by close (or with
 * the server: it reads until its input closes).
 */
export function createReaper(ownUid: number) {
  if (!isUserId(ownUid)) throw new Error(`not a user id for the reaper: ${ownUid}`);
  let current: ReturnType<typeof start> | undefined;
  let closed = false;

  const start = () => {
    const child: ReaperProcess = spawn('perl', ['-e', PROGRAM, String(ownUid)], {
      env: REAPER_ENVIRONMENT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    /** What waits for an answer of this process, in the order the lines were sent. */
    const waiting: Array<{ resolve: (failed: number[]) => void; reject: (error: Error) => void }> = [];
    let received = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      received += chunk;
      for (let end = received.indexOf('\n'); end >= 0; end = received.indexOf('\n')) {
        const answer = received.slice(0, end);
        received = received.slice(end + 1);
        const failed =
          answer === 'ok'
            ? []
            : answer
                .replace(/^failed ?/, '')
                .split(' ')
                .map(Number);
        waiting.shift()?.resolve(failed);
      }
    });
    const fail = (error: Error) => {
      if (current?.child === child) current = undefined;
      for (const next of waiting.splice(0)) next.reject(error);
    };
    child.on('error', fail);
    // Once its output is read to the end: every answer it gave has been taken.
    child.on('close', (code, signal) => fail(new Error(`the reaper ended (${signal ?? code})`)));
    child.stdin.on('error', () => undefined);
    // A reaper waiting for work does not keep the server's process alive.
    child.unref();
    for (const stream of [child.stdin, child.stdout]) (stream as unknown as { unref(): void }).unref();
    return { child, waiting };
  };

  return {
    /**
     * Sends SIGKILL to every process of `uids` (user ids, not root's nor the reaper's own);
     * resolves to those it could not do (none, normally).
     */
    reap(uids: readonly number[]): Promise<number[]> {
      if (closed) return Promise.reject(new Error('the reaper is closed'));
      if (uids.length === 0) return Promise.resolve([]);
      if (!uids.every(isUserId) || uids.includes(ownUid)) {
        return Promise.reject(new Error(`not user ids the reaper takes: ${uids.join(' ')}`));
      }
      current ??= start();
      const { child, waiting } = current;
      const answered = new Promise<number[]>((resolve, reject) => waiting.push({ resolve, reject }));
      child.stdin.write(`${uids.join(' ')}\n`);
      return answered;
    },
    /** Ends the reaper process once what it was asked is done; it takes nothing more. */
    close(): void {
      closed = true;
      current?.child.stdin.end();
      current = undefined;
    },
  };
}
export type Reaper = ReturnType<typeof createReaper>;
