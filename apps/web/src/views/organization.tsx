import { useQuery } from '@tanstack/react-query';
import { firstElements } from '../api/data.js';
import { useSession } from '../api/session.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { formatTime } from '../ui/time.js';

/** The organization of the key, its accounts, and how keys are made (the API has no key routes). */
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
      {accounts.data && (
        <div className="table-scroll">
          <table>
            <caption className="visually-hidden">Accounts of the organization</caption>
            <thead>
              <tr>
                <th scope="col">Email address</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">State</th>
                <th scope="col">Last login</th>
              </tr>
            </thead>
            <tbody>
              {accounts.data.map((a) => (
                <tr key={a.id}>
                  <td>{a.email_address}</td>
                  <td>{a.name ?? ''}</td>
                  <td>{a.role}</td>
                  <td>{a.disabled ? 'disabled' : 'active'}</td>
                  <td>{formatTime(a.last_login_time)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>API keys</h2>
      <p>
        API v0 has no routes for keys yet: an administrator of the server makes them with{' '}
        <code>pipewright-server create-api-key --email ADDRESS</code>, and accounts with{' '}
        <code>pipewright-server create-account</code>.
      </p>
    </>
  );
}
