/**
 * Who is calling, and what everything is scoped to: the organization always; the key, for
 * the rate limit; an account for account keys; a single project for the key of a task.
 */
export interface Principal {
  orgId: string;
  keyId: string;
  role: 'admin' | 'user';
  /** Absent for the key of a task, which belongs to no account. */
  accountId?: string;
  /** Set for the key of a task: the only project it may use. */
  projectId?: string;
}
