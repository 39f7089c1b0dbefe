/**
 * The command that removes a directory tree processes of task users may still change (one holding
 * a directory of it open): GNU rm walks it by directory descriptors (openat, unlinkat), so that a
 * directory swapped for a link meanwhile cannot lead the server (root) out of the tree, as a
 * removal by paths would; it stays on the tree's file system.
 */
export function treeRemovalArgv(dir: string): string[] {
  return ['/bin/rm', '-rf', '--one-file-system', '--', dir];
}
