import { type FSWatcher, watch } from 'node:fs';

/**
 * Calls `listener` whenever the write-ahead log of the SQLite database `file` is written, by any
 * connection of any process: every commit writes it. Until the returned function is called.
 *
 * The kernel tells as soon as the bytes are written (inotify), so a commit of another process is
 * seen at once rather than at a reader's next check. A call may come as that commit's last frame is
 * written, a moment before the commit shows to readers: callers still check now and then. A commit
 * of this process's thread shows before any call, which comes on a later turn of the event loop.
 * Without a log to watch (an in-memory database), or if the watch fails, it never calls.
 */
export function watchLog(file: string, listener: () => void): () => void {
  let watcher: FSWatcher;
  try {
    watcher = watch(`${file}-wal`, { persistent: false }, () => listener());
  } catch {
    return () => {};
  }
  watcher.on('error', () => watcher.close());
  return () => watcher.close();
}
