import type { Schemas } from '@pipewright/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { dataOf, firstElements } from '../api/data.js';
import { useSession, useSessionState } from '../api/session.js';
import { ConfirmButton } from '../ui/confirm.js';
import { NewKey } from '../ui/new-key.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { TableScroll } from '../ui/table-scroll.js';
import { formatTime } from '../ui/time.js';

type Account = Schemas['Account'];
type Role = Account['role'];

/**
 * The organization of the key, its accounts and API keys. Everyone reads the accounts and
 * manages their own keys; admins also create, disable and enable accounts and manage every key
 * (the API enforces it: this page only shows what the role can do).
 */
export function OrganizationPage() {
  const { client, organization, account } = useSession();
  const accounts = useQuery({
    queryKey: ['accounts'],
    queryFn: () => firstElements(client, '/accounts', { sort: 'email_address', size: 100 }, 1000),
  });
  return (
    <>
      <PageTitle title="Organization">Organization {organization.name}</PageTitle>
      <dl className="facts">
        <dt>Id</dt>
        <dd className="mono">{organization.id}</dd>
        <dt>Created</dt>
        <dd>{formatTime(organization.creation_time)}</dd>
        <dt>Contact</dt>
        <dd>{organization.contact_email_address || '—'}</dd>
        <dt>Signed in as</dt>
        <dd>
          {account.email_address} ({account.role})
        </dd>
      </dl>
      <h2>Accounts</h2>
      {accounts.error && <ErrorNotice error={accounts.error} />}
      {!accounts.data && !accounts.error && <Loading what="accounts" />}
      {accounts.data && <AccountTable accounts={accounts.data} />}
      {account.role === 'admin' && <CreateAccountForm />}
      <h2>API keys</h2>
      <ApiKeys accounts={accounts.data ?? []} />
    </>
  );
}

function AccountTable({ accounts }: { accounts: Account[] }) {
  const { client, account: me } = useSession();
  const queries = useQueryClient();
  const admin = me.role === 'admin';
  const setDisabled = async (account: Account, disabled: boolean) => {
    const path = { params: { path: { id: account.id } } };
    await (disabled
      ? client.POST('/accounts/id/{id}/disable', path)
      : client.POST('/accounts/id/{id}/enable', path));
    await queries.invalidateQueries({ queryKey: ['accounts'] });
  };
  return (
    <TableScroll label="Accounts of the organization">
      <table>
        <caption className="visually-hidden">Accounts of the organization</caption>
        <thead>
          <tr>
            <th scope="col">Email address</th>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">State</th>
            <th scope="col">Last login</th>
            {admin && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {accounts.map((a) => (
            <tr key={a.id}>
              <td>{a.email_address}</td>
              <td>{a.name ?? ''}</td>
              <td>{a.role}</td>
              <td>{a.disabled ? 'disabled' : 'active'}</td>
              <td className="time">{formatTime(a.last_login_time)}</td>
              {admin && (
                <td>
                  {a.id !== me.id &&
                    (a.disabled ? (
                      <button type="button" onClick={() => void setDisabled(a, false)}>
                        Enable<span className="visually-hidden"> {a.email_address}</span>
                      </button>
                    ) : (
                      <ConfirmButton
                        question={`Disable ${a.email_address}? Its keys stop working at once, until it is enabled again.`}
                        confirmLabel="Disable"
                        danger
                        onConfirm={() => setDisabled(a, true)}
                      >
                        Disable<span className="visually-hidden"> {a.email_address}</span>
                      </ConfirmButton>
                    ))}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function CreateAccountForm() {
  const { client } = useSession();
  const queries = useQueryClient();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('user');
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      const account = await dataOf(
        client.POST('/accounts', {
          body: { email_address: email.trim(), role, ...(name.trim() ? { name: name.trim() } : {}) },
        }),
      );
      setCreated(account.email_address);
      setEmail('');
      setName('');
      await queries.invalidateQueries({ queryKey: ['accounts'] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form className="filters" aria-label="New account" onSubmit={(event) => void submit(event)}>
      <label>
        Email address
        <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
      </label>
      <label>
        Display name
        <input type="text" value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <label>
        Role
        <select value={role} onChange={(event) => setRole(event.target.value as Role)}>
          <option value="user">user</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <button type="submit">Create account</button>
      <span role="status">{created ? `Created ${created}: give it a key below.` : ''}</span>
      {error !== undefined && <ErrorNotice error={error} />}
    </form>
  );
}

/** The keys the role may see (an admin's organization's, a user's own), to create and revoke. */
function ApiKeys({ accounts }: { accounts: Account[] }) {
  const { client, account: me, keyId } = useSession();
  const { signOut } = useSessionState();
  const queries = useQueryClient();
  const admin = me.role === 'admin';
  const keys = useQuery({
    queryKey: ['api-keys'],
    queryFn: () => firstElements(client, '/api_keys', { size: 100, order: 'desc' }, 1000),
  });
  const [owner, setOwner] = useState(me.id);
  const [name, setName] = useState('');
  const [newKey, setNewKey] = useState<string>();
  const [error, setError] = useState<unknown>();
  const emailOf = (id: string) => accounts.find((a) => a.id === id)?.email_address ?? id;
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      const created = await dataOf(
        client.POST('/api_keys', {
          body: {
            ...(owner !== me.id ? { account_id: owner } : {}),
            ...(name.trim() ? { name: name.trim() } : {}),
          },
        }),
      );
      setNewKey(created.key);
      setName('');
      await queries.invalidateQueries({ queryKey: ['api-keys'] });
    } catch (failure) {
      setError(failure);
    }
  };
  const revoke = async (key: Schemas['ApiKey']) => {
    await client.POST('/api_keys/id/{id}/revoke', { params: { path: { id: key.id } } });
    // The key of this session no longer opens anything: nothing more can be done with it.
    if (key.id === keyId) signOut();
    else await queries.invalidateQueries({ queryKey: ['api-keys'] });
  };
  return (
    <>
      {newKey && <NewKey apiKey={newKey} onDone={() => setNewKey(undefined)} />}
      <form className="filters" aria-label="New API key" onSubmit={(event) => void create(event)}>
        {admin && (
          <label>
            For account
            <select value={owner} onChange={(event) => setOwner(event.target.value)}>
              {accounts.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.email_address}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          What it is for
          <input type="text" maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <button type="submit">Create API key</button>
        {error !== undefined && <ErrorNotice error={error} />}
      </form>
      {keys.error && <ErrorNotice error={keys.error} />}
      {!keys.data && !keys.error && <Loading what="API keys" />}
      {keys.data && (
        <TableScroll label={admin ? 'API keys of the organization' : 'Your API keys'}>
          <table>
            <caption className="visually-hidden">
              {admin ? 'API keys of the organization' : 'Your API keys'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">For</th>
                {admin && <th scope="col">Account</th>}
                <th scope="col">Created</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((key) => (
                <tr key={key.id}>
                  <td className="mono">
                    pwk_{key.id}_…{key.id === keyId ? ' (this session)' : ''}
                  </td>
                  <td>{key.name ?? ''}</td>
                  {admin && <td>{emailOf(key.account_id)}</td>}
                  <td className="time">{formatTime(key.creation_time)}</td>
                  <td>{key.revoked ? `revoked ${formatTime(key.revocation_time)}` : 'active'}</td>
                  <td>
                    {!key.revoked && (
                      <ConfirmButton
                        question={`Revoke the key ${key.name ?? key.id}? It stops working at once, for good.${key.id === keyId ? ' It is the key of this session: you will be signed out.' : ''}`}
                        confirmLabel="Revoke"
                        danger
                        onConfirm={() => revoke(key)}
                      >
                        Revoke<span className="visually-hidden"> {key.name ?? key.id}</span>
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}
