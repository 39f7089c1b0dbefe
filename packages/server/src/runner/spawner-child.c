/*
 * The spawner process: started by the server (spawner.ts), it spawns the step processes and owns
 * them until they end, reporting back in frames on its stdout (spawner-protocol.ts says what each
 * frame holds). Requests come in frames on its stdin; when stdin closes, the server is gone (stopped
 * or killed), and so are the steps this process still runs.
 *
 * Why C and not Node: each spawn forks the spawner, and a fork costs in proportion to the caller's
 * mappings. Forked from this small process, a step costs the machine about half the CPU it did
 * forked from a Node process (bench/README.md), and the spawner's own work per step (the frames,
 * the output, the timers) is a few system calls. It links only the C library.
 *
 * What it guarantees for each step, as Spawner.run (spawner.ts) documents:
 * - The process runs in a new session (hence a process group of its own that can be stopped whole),
 *   with exactly the environment given, stdin /dev/null, and stdout and stderr one end of a socket
 *   pair (both arrive in one stream, in the order written); the spawner reads the other end.
 * - A file the kernel cannot execute (no #! line) is run by /bin/sh, as execvp and the shells do;
 *   argv is still not parsed by the shell.
 * - When the process exits by itself, what it left running in its group is killed: nothing of a
 *   step outlives it, and leftovers would otherwise keep the output open (and the step running).
 * - On abort the group gets SIGTERM, then SIGKILL after the grace period unless the output has
 *   closed by then (children still cleaning up after the main process died get the same grace).
 * - Output is sent back up to the run's limit; the rest is read and dropped, so that a step printing
 *   gigabytes neither blocks nor floods the server. A frame is written whole before anything else
 *   happens: a server slow to read slows the steps' output down, and loses none of it.
 *
 * argv[1] `--no-new-privs`: set the flag, which every step inherits (SECURITY.md, finding 10).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * A process is reported as spawned once it has run this long (or before its first output): most
 * trivial steps end first, and are reported only by their end.
 */
#define SPAWNED_REPORT_DELAY_MS 20
/*
 * After SIGKILL to its group, only a process that left the group (setsid) can still hold the output
 * open; it must not hold the step forever.
 */
#define ORPHANED_OUTPUT_WAIT_MS 2000
/* Output read at once, and so the largest output frame. */
#define READ_CHUNK_BYTES 65536
/* A request larger than this is not one the server sends: the stream is out of step. */
#define MAX_REQUEST_BYTES (256u * 1024 * 1024)

/* Frame types; spawner-protocol.ts has the same numbers. */
enum { TO_START = 1, TO_ABORT = 2, TO_KILL = 3 };
enum { FROM_SPAWNED = 1, FROM_OUTPUT = 2, FROM_END = 3 };
enum { END_EXITED = 0, END_SIGNALED = 1, END_NOT_STARTED = 2 };

/* No deadline. */
#define NEVER INT64_MAX

struct run {
  uint32_t id;
  pid_t pid;
  /* Our end of the output's socket pair; -1 once closed. */
  int output;
  int exited;
  int status;
  int aborted;
  /* After an abort's SIGTERM, how long the group has before SIGKILL. */
  uint32_t grace_ms;
  /* SIGKILL was sent to the group: nothing more is sent. */
  int killed;
  int reported;
  /* Output still sent back, in bytes (infinite without a limit). */
  double forwardable;
  int64_t report_at;
  int64_t grace_ends_at;
  int64_t orphan_wait_ends_at;
};

static struct run *runs;
static size_t run_count, run_capacity;
static int dev_null = -1;
static char boot_id[64];

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(unsigned char *p, uint32_t value) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(value >> (8 * i));
}

static double get_f64(const unsigned char *p) {
  uint64_t bits = (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
  double value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

_Noreturn static void shut_down(int status);

static void write_all(const void *data, size_t length) {
  const char *p = data;
  while (length > 0) {
    ssize_t written = write(STDOUT_FILENO, p, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      shut_down(0); /* the server is gone */
    }
    p += written;
    length -= (size_t)written;
  }
}

/* One frame: length of the rest (u32), type (u8), run id (u32), then `body`. */
static void send_frame(int type, uint32_t id, const void *head, size_t head_length, const void *body,
                       size_t body_length) {
  unsigned char frame[9];
  put_u32(frame, (uint32_t)(5 + head_length + body_length));
  frame[4] = (unsigned char)type;
  put_u32(frame + 5, id);
  write_all(frame, sizeof frame);
  if (head_length > 0) write_all(head, head_length);
  if (body_length > 0) write_all(body, body_length);
}

static void send_end(uint32_t id, int kind, int aborted, int value) {
  unsigned char head[6];
  head[0] = (unsigned char)kind;
  head[1] = (unsigned char)aborted;
  put_u32(head + 2, (uint32_t)value);
  send_frame(FROM_END, id, head, sizeof head, NULL, 0);
}

/* `<boot id>/<start time>`, as process-identity.ts reads it; empty when /proc cannot tell. */
static size_t process_identity(pid_t pid, char *out, size_t size) {
  char path[64], stat[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || boot_id[0] == '\0') {
    if (fd >= 0) close(fd);
    return 0;
  }
  ssize_t length = read(fd, stat, sizeof stat - 1);
  close(fd);
  if (length <= 0) return 0;
  stat[length] = '\0';
  /* The command name (field 2) is in parentheses and may hold spaces or parentheses itself. */
  char *field = strrchr(stat, ')');
  if (field == NULL) return 0;
  /* Past ") ", field 3 (state) begins: field 22 is 19 spaces further. */
  field += 2;
  for (int i = 0; i < 19 && field != NULL; i++) {
    field = strchr(field, ' ');
    if (field != NULL) field++;
  }
  if (field == NULL) return 0;
  int written = snprintf(out, size, "%s/%.*s", boot_id, (int)strcspn(field, " "), field);
  return written > 0 && (size_t)written < size ? (size_t)written : 0;
}

static void read_boot_id(void) {
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t length = read(fd, boot_id, sizeof boot_id - 1);
  close(fd);
  boot_id[length > 0 ? length : 0] = '\0';
  boot_id[strcspn(boot_id, "\n")] = '\0';
}

static struct run *find_run(uint32_t id) {
  for (size_t i = 0; i < run_count; i++)
    if (runs[i].id == id) return &runs[i];
  return NULL;
}

/* The group is often gone already (a step that left nothing behind): that is no error. */
static void signal_group(struct run *run, int signal) {
  if (run->killed) return;
  run->killed = signal == SIGKILL;
  kill(-run->pid, signal);
}

static void kill_now(struct run *run, int64_t now) {
  signal_group(run, SIGKILL);
  if (run->orphan_wait_ends_at == NEVER) run->orphan_wait_ends_at = now + ORPHANED_OUTPUT_WAIT_MS;
}

static void close_output(struct run *run) {
  if (run->output < 0) return;
  close(run->output);
  run->output = -1;
}

static void report_spawned(struct run *run) {
  run->report_at = NEVER;
  if (run->reported || run->exited) return;
  run->reported = 1;
  /* Not reaped yet (no exit seen), so the pid still names this process. */
  unsigned char head[4];
  char identity[128];
  put_u32(head, (uint32_t)run->pid);
  size_t length = process_identity(run->pid, identity, sizeof identity);
  send_frame(FROM_SPAWNED, run->id, head, sizeof head, identity, length);
}

/* Once the process has exited and its output is closed: its end is sent, and the run forgotten. */
static void settle_if_done(struct run *run) {
  if (!run->exited || run->output >= 0) return;
  signal_group(run, SIGKILL);
  if (WIFSIGNALED(run->status)) send_end(run->id, END_SIGNALED, run->aborted, WTERMSIG(run->status));
  else send_end(run->id, END_EXITED, run->aborted, WEXITSTATUS(run->status));
  *run = runs[--run_count];
}

/* Whether the table of runs has room for one more, growing it if need be. */
static int room_for_a_run(void) {
  if (run_count < run_capacity) return 1;
  size_t capacity = run_capacity ? 2 * run_capacity : 16;
  struct run *grown = realloc(runs, capacity * sizeof *runs);
  if (grown == NULL) return 0;
  runs = grown;
  run_capacity = capacity;
  return 1;
}

/* The request's strings: `count` NUL-terminated ones from `*cursor`, which moves past them. */
static char **take_strings(char **cursor, const char *end, uint32_t count, size_t extra) {
  char **strings = calloc((size_t)count + extra + 1, sizeof *strings);
  if (strings == NULL) return NULL;
  for (uint32_t i = 0; i < count; i++) {
    char *terminator = memchr(*cursor, '\0', (size_t)(end - *cursor));
    if (terminator == NULL) {
      free(strings);
      return NULL;
    }
    strings[i + extra] = *cursor;
    *cursor = terminator + 1;
  }
  return strings;
}

/*
 * In the forked child: becomes the step and execs it. Only async-signal-safe calls from here on.
 * What fails is written to `report` (errno, 4 bytes) before the child exits.
 */
static void become_step(int report, int output, const char *cwd, int has_user, uid_t uid, gid_t gid,
                        char **argv, char **shell_argv, char **environment) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* As libuv does: an ignored signal (SIGPIPE here, any the server was started with) stays
   * ignored across exec, and a step must not start with SIGTERM ignored. */
  for (int signal_number = 1; signal_number < NSIG; signal_number++)
    if (signal_number != SIGKILL && signal_number != SIGSTOP) signal(signal_number, SIG_DFL);
  setsid();
  if (dup2(dev_null, STDIN_FILENO) < 0 || dup2(output, STDOUT_FILENO) < 0 ||
      dup2(output, STDERR_FILENO) < 0)
    goto failed;
  /* In the order libuv applies them: the directory first, then the supplementary groups dropped. */
  if (chdir(cwd) < 0) goto failed;
  if (has_user && (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)) goto failed;
  execve(argv[0], argv, environment);
  if (errno == ENOEXEC) execve("/bin/sh", shell_argv, environment);
failed:;
  int error = errno;
  (void)!write(report, &error, sizeof error);
  _exit(127);
}

/*
 * start: graceMs (u32), forwardBytes (f64), hasUser (u8), uid (u32), gid (u32), argc (u32),
 * envc (u32), then NUL-terminated strings: cwd, argv, environment (`name=value`).
 */
static void start(uint32_t id, char *body, const char *end, int64_t now) {
  const unsigned char *p = (const unsigned char *)body;
  if (end - body < 29) {
    send_end(id, END_NOT_STARTED, 0, EINVAL);
    return;
  }
  uint32_t grace_ms = get_u32(p);
  double forward_bytes = get_f64(p + 4);
  int has_user = p[12];
  uid_t uid = get_u32(p + 13);
  gid_t gid = get_u32(p + 17);
  uint32_t argc = get_u32(p + 21), envc = get_u32(p + 25);
  char *cursor = body + 29;
  char **cwd = take_strings(&cursor, end, 1, 0);
  /* argv with room for /bin/sh in front (shell_argv), for a file without a #! line. */
  char **shell_argv = cwd ? take_strings(&cursor, end, argc, 1) : NULL;
  char **environment = shell_argv ? take_strings(&cursor, end, envc, 0) : NULL;
  int sockets[2] = {-1, -1}, report[2] = {-1, -1};
  int error = 0;
  if (environment == NULL || argc == 0) error = EINVAL;
  else if (!room_for_a_run()) error = ENOMEM;
  else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) < 0) error = errno;
  else if (pipe2(report, O_CLOEXEC) < 0) error = errno;
  pid_t pid = -1;
  if (error == 0) {
    shell_argv[0] = "/bin/sh";
    pid = fork();
    if (pid == 0)
      become_step(report[1], sockets[1], cwd[0], has_user, uid, gid, shell_argv + 1, shell_argv,
                  environment);
    if (pid < 0) error = errno;
  }
  if (report[1] >= 0) close(report[1]);
  if (sockets[1] >= 0) close(sockets[1]);
  /* The exec closes the report pipe: end of file means the step runs. */
  if (pid > 0) {
    ssize_t length;
    do length = read(report[0], &error, sizeof error);
    while (length < 0 && errno == EINTR);
    if (length != (ssize_t)sizeof error) error = 0;
    else waitpid(pid, NULL, 0);
  }
  if (report[0] >= 0) close(report[0]);
  free(cwd);
  free(shell_argv);
  free(environment);
  if (error != 0) {
    if (sockets[0] >= 0) close(sockets[0]);
    send_end(id, END_NOT_STARTED, 0, error);
    return;
  }
  fcntl(sockets[0], F_SETFL, O_NONBLOCK);
  runs[run_count++] = (struct run){
      .id = id,
      .pid = pid,
      .output = sockets[0],
      .grace_ms = grace_ms,
      .forwardable = forward_bytes,
      .report_at = now + SPAWNED_REPORT_DELAY_MS,
      .grace_ends_at = NEVER,
      .orphan_wait_ends_at = NEVER,
  };
}

static void abort_run(struct run *run, int64_t now) {
  if (run->aborted) return;
  run->aborted = 1;
  signal_group(run, SIGTERM);
  run->grace_ends_at = now + run->grace_ms;
}

static void handle_request(int type, uint32_t id, char *body, const char *end, int64_t now) {
  if (type == TO_START) {
    start(id, body, end, now);
    return;
  }
  struct run *run = find_run(id);
  if (run == NULL) return; /* ended meanwhile */
  if (type == TO_ABORT) abort_run(run, now);
  else if (type == TO_KILL) kill_now(run, now);
}

static unsigned char *requests;
static size_t requests_length, requests_capacity;

/* Makes the buffer of requests hold at least `capacity` bytes. */
static void reserve_requests(size_t capacity) {
  if (requests_capacity >= capacity) return;
  unsigned char *grown = realloc(requests, capacity);
  if (grown == NULL) shut_down(2);
  requests = grown;
  requests_capacity = capacity;
}

/* Reads what the server sent and handles each whole request in it. */
static void read_requests(void) {
  reserve_requests(requests_length + READ_CHUNK_BYTES);
  ssize_t length = read(STDIN_FILENO, requests + requests_length, requests_capacity - requests_length);
  if (length < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (length <= 0) shut_down(0); /* the server is gone */
  requests_length += (size_t)length;
  size_t used = 0;
  while (requests_length - used >= 4) {
    uint32_t size = get_u32(requests + used);
    if (size < 5 || size > MAX_REQUEST_BYTES) {
      fprintf(stderr, "pipewright-spawner: a request of %u bytes: out of step with the server\n", size);
      shut_down(2);
    }
    if (requests_length - used - 4 < size) {
      /* Room for the whole request (moved to the front below), so that a large one is read in few calls. */
      reserve_requests((size_t)size + 4 + READ_CHUNK_BYTES);
      break;
    }
    unsigned char *frame = requests + used + 4;
    handle_request(frame[0], get_u32(frame + 1), (char *)frame + 5, (char *)frame + size, now_ms());
    used += 4 + size;
  }
  memmove(requests, requests + used, requests_length - used);
  requests_length -= used;
}

/* Reads a step's output: what is within its limit is sent back, the rest dropped. */
static void read_output(struct run *run) {
  static char chunk[READ_CHUNK_BYTES];
  ssize_t length = read(run->output, chunk, sizeof chunk);
  if (length < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (length <= 0) {
    /* End of file, or a reset, which ends the output as well. */
    close_output(run);
    settle_if_done(run);
    return;
  }
  report_spawned(run);
  if (run->forwardable < 1) return;
  size_t part = (double)length > run->forwardable ? (size_t)run->forwardable : (size_t)length;
  run->forwardable -= (double)part;
  send_frame(FROM_OUTPUT, run->id, NULL, 0, chunk, part);
}

/* Reaps every child that has exited (all of them are steps). */
static void reap(int64_t now) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t i = 0; i < run_count; i++) {
      struct run *run = &runs[i];
      if (run->pid != pid) continue;
      run->exited = 1;
      run->status = status;
      if (!run->aborted) kill_now(run, now);
      settle_if_done(run);
      break;
    }
  }
}

/* Applies the deadlines that have passed; returns how long until the next one (-1: none). */
static int run_timers(int64_t now) {
  for (size_t i = 0; i < run_count;) {
    struct run *run = &runs[i];
    if (run->report_at <= now) report_spawned(run);
    if (run->grace_ends_at <= now) {
      run->grace_ends_at = NEVER;
      kill_now(run, now);
    }
    if (run->orphan_wait_ends_at <= now) {
      size_t before = run_count;
      run->orphan_wait_ends_at = NEVER;
      close_output(run);
      settle_if_done(run);
      if (run_count < before) continue; /* the last run took this one's place */
    }
    i++;
  }
  int64_t next = NEVER;
  for (size_t i = 0; i < run_count; i++) {
    const struct run *run = &runs[i];
    if (run->report_at < next) next = run->report_at;
    if (run->grace_ends_at < next) next = run->grace_ends_at;
    if (run->orphan_wait_ends_at < next) next = run->orphan_wait_ends_at;
  }
  if (next == NEVER) return -1;
  return next <= now ? 0 : next - now > 60000 ? 60000 : (int)(next - now);
}

/* The server is gone (status 0), or this process cannot go on (2): so are the steps it still runs. */
_Noreturn static void shut_down(int status) {
  for (size_t i = 0; i < run_count; i++) signal_group(&runs[i], SIGKILL);
  _exit(status);
}

/* Descriptors this process was started with, beyond stdin, stdout and stderr, are not the steps'. */
static void close_on_exec_inherited(void) {
  DIR *directory = opendir("/proc/self/fd");
  if (directory == NULL) return;
  struct dirent *entry;
  while ((entry = readdir(directory)) != NULL) {
    int fd = atoi(entry->d_name);
    if (fd > STDERR_FILENO && fd != dirfd(directory)) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  closedir(directory);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--no-new-privs") == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    perror("pipewright-spawner: no new privileges");
    return 2;
  }
  if (isatty(STDIN_FILENO)) {
    fputs("pipewright-spawner is started by the Pipewright server, which talks to it on stdin and stdout\n",
          stderr);
    return 2;
  }
  close_on_exec_inherited();
  signal(SIGPIPE, SIG_IGN); /* a write to a server gone fails, and ends this process */
  sigset_t child_ended;
  sigemptyset(&child_ended);
  sigaddset(&child_ended, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_ended, NULL);
  int children = signalfd(-1, &child_ended, SFD_CLOEXEC | SFD_NONBLOCK);
  dev_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (children < 0 || dev_null < 0) {
    perror("pipewright-spawner");
    return 2;
  }
  read_boot_id();
  struct pollfd *polled = NULL;
  size_t polled_capacity = 0;
  for (;;) {
    int timeout = run_timers(now_ms());
    if (polled_capacity < run_count + 2) {
      polled_capacity = 2 * (run_count + 2);
      polled = realloc(polled, polled_capacity * sizeof *polled);
      if (polled == NULL) shut_down(2);
    }
    polled[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    polled[1] = (struct pollfd){.fd = children, .events = POLLIN};
    /* Runs that end while their events are handled move: each entry names its run by id. */
    size_t count = 2;
    for (size_t i = 0; i < run_count; i++)
      if (runs[i].output >= 0) polled[count++] = (struct pollfd){.fd = runs[i].output, .events = POLLIN};
    if (poll(polled, count, timeout) < 0) {
      if (errno == EINTR) continue;
      perror("pipewright-spawner: poll");
      shut_down(2);
    }
    for (size_t k = 2; k < count; k++) {
      if (polled[k].revents == 0) continue;
      for (size_t i = 0; i < run_count; i++)
        if (runs[i].output == polled[k].fd) {
          read_output(&runs[i]);
          break;
        }
    }
    if (polled[1].revents) {
      struct signalfd_siginfo info;
      while (read(children, &info, sizeof info) > 0) continue;
      reap(now_ms());
    }
    if (polled[0].revents) read_requests();
  }
}
