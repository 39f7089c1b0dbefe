import { walk } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorQuery, startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A fresh organization with an admin and `users` user accounts. */
async function organizationWith(users: number) {
  const name = uniqueName('org');
  const { apiKey } = server.services.provisioning.createOrganization(
    name,
    `${uniqueName('admin')}@example.test`,
  );
  const keys = Array.from({ length: users }, () => server.newAccount(name, 'user'));
  return { name, adminKey: apiKey, userKeys: keys };
}

describe('getCurrentAccount', () => {
  it('answers the account of the key, with its login recorded', async () => {
    const { data } = await server.client().GET('/account');
    expect(data).toMatchObject({ email_address: 'admin@localhost', role: 'admin', disabled: false });
    expect(data?.settings).toEqual({ date_format: 'relative' });
    expect(data?.last_login_time).toBeDefined();
    expect(Date.now() - Date.parse(data?.last_login_time ?? '')).toBeLessThan(60_000);
  });

  it('answers a user account as a user', async () => {
    const org = await organizationWith(1);
    const { data } = await server.client(org.userKeys[0]).GET('/account');
    expect(data?.role).toBe('user');
  });
});

describe('getAccount', () => {
  it('answers an account of the organization', async () => {
    const org = await organizationWith(1);
    const me = await server.client(org.userKeys[0]).GET('/account');
    const { data } = await server.client(org.adminKey).GET('/accounts/id/{id}', {
      params: { path: { id: me.data?.id ?? '' } },
    });
    expect(data).toEqual(me.data);
  });

  it("answers unknown_account for another organization's account", async () => {
    const org = await organizationWith(0);
    const mine = await server.client().GET('/account');
    await expect(
      server.client(org.adminKey).GET('/accounts/id/{id}', { params: { path: { id: mine.data?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_account' });
  });

  it('answers invalid_route_variable for an id that cannot be one', async () => {
    await expect(
      server.client().GET('/accounts/id/{id}', { params: { path: { id: 'not-an-id' } } }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_route_variable' });
  });
});

describe('listAccounts', () => {
  it('walks the accounts of the organization only, in both directions', async () => {
    const org = await organizationWith(6);
    const client = server.client(org.adminKey);
    const all = [];
    for await (const account of walk(client, '/accounts', { size: 2 })) all.push(account);
    expect(all).toHaveLength(7);
    expect(all.map((a) => a.id)).toEqual(all.map((a) => a.id).sort());
    expect(new Set(all.map((a) => a.org_id)).size).toBe(1);

    const last = await client.GET('/accounts', { params: { query: { size: 3, order: 'desc' } } });
    expect(last.data?.elements.map((a) => a.id)).toEqual(
      all
        .map((a) => a.id)
        .reverse()
        .slice(0, 3),
    );
    const back = await client.GET('/accounts', { params: { query: cursorQuery(last.data?.next) } });
    expect(back.data?.elements.map((a) => a.id)).toEqual(
      all
        .map((a) => a.id)
        .reverse()
        .slice(3, 6),
    );
    const again = await client.GET('/accounts', { params: { query: cursorQuery(back.data?.previous) } });
    expect(again.data?.elements).toEqual(last.data?.elements);
  });

  it('sorts by email_address', async () => {
    const org = await organizationWith(3);
    const { data } = await server.client(org.adminKey).GET('/accounts', {
      params: { query: { sort: 'email_address' } },
    });
    const emails = data?.elements.map((a) => a.email_address) ?? [];
    expect(emails).toHaveLength(4);
    expect(emails).toEqual([...emails].sort());
  });
});
