import { DomainError } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';

/** Refuses a caller whose account is not an admin: `action` completes "only admin accounts can". */
export function requireAdmin(principal: Principal, action: string): void {
  if (principal.role !== 'admin') {
    throw new DomainError('permission_denied', `only admin accounts can ${action}`);
  }
}

/** The account of the calling key; the key of a task has none, and may not act as one. */
export function accountOf(principal: Principal): string {
  if (!principal.accountId) throw new DomainError('permission_denied', 'the key of a task has no account');
  return principal.accountId;
}
