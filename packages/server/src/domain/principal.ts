/** Who is calling: the account of the API key, and the organization everything is scoped to. */
export interface Principal {
  orgId: string;
  accountId: string;
  role: 'admin' | 'user';
}
