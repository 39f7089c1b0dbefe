import { walk } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { cursorQuery, sharedTestServer, uniqueName } from '../helpers/test-server.js';

const server = sharedTestServer();

/** A fresh organization with an admin and `users` user accounts. */
async function organizationWith(users: number) {
  const name = uniqueName('org');
  const { apiKey } = await server.services.provisioning.createOrganization(
    name,
    `${uniqueName('admin')}@example.test`,
  );
  const keys: string[] = [];
  for (let n = 0; n < users; n += 1) keys.push(await server.newAccount(name, 'user'));
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

describe('createAccount', () => {
  it('creates an account in the organization of an admin, with no key yet, and answers 201', async () => {
    const org = await organizationWith(0);
    const email = `${uniqueName('robot')}@example.test`;
    const admin = server.client(org.adminKey);
    const { data, response } = await admin.POST('/accounts', {
      body: { email_address: email, role: 'user', name: 'CI robot' },
    });
    expect(response.status).toBe(201);
    const { data: me } = await admin.GET('/account');
    expect(data).toMatchObject({ email_address: email, role: 'user', name: 'CI robot', disabled: false });
    expect(data?.org_id).toBe(me?.org_id);
    expect(data?.last_login_time).toBeUndefined();
    const { data: read } = await admin.GET('/accounts/id/{id}', { params: { path: { id: data?.id ?? '' } } });
    expect(read).toEqual(data);
    const { data: keys } = await admin.GET('/api_keys', {
      params: { query: { account_id: data?.id ?? '' } },
    });
    expect(keys?.elements).toEqual([]);
  });

  it('refuses a user account', async () => {
    const org = await organizationWith(1);
    await expect(
      server.client(org.userKeys[0]).POST('/accounts', {
        body: { email_address: `${uniqueName('x')}@example.test`, role: 'user' },
      }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
  });

  it('answers duplicate_account for an address taken in any organization', async () => {
    const org = await organizationWith(0);
    await expect(
      server
        .client(org.adminKey)
        .POST('/accounts', { body: { email_address: 'admin@localhost', role: 'admin' } }),
    ).rejects.toMatchObject({ status: 409, code: 'duplicate_account' });
  });

  it('refuses a malformed address, an unknown role and unknown members', async () => {
    await expect(
      server.client().POST('/accounts', {
        body: { email_address: 'nobody', role: 'owner', disabled: true } as never,
      }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_request_body' });
  });
});

describe('disableAccount', () => {
  it('refuses every key of the account from the next request on, until it is enabled again', async () => {
    const org = await organizationWith(1);
    const userKey = org.userKeys[0] as string;
    const user = server.client(userKey);
    const { data: me } = await user.GET('/account');
    const admin = server.client(org.adminKey);
    const { data: disabled } = await admin.POST('/accounts/id/{id}/disable', {
      params: { path: { id: me?.id ?? '' } },
    });
    expect(disabled).toMatchObject({ id: me?.id, disabled: true });
    await expect(user.GET('/account')).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    const { data: enabled } = await admin.POST('/accounts/id/{id}/enable', {
      params: { path: { id: me?.id ?? '' } },
    });
    expect(enabled).toMatchObject({ id: me?.id, disabled: false });
    const { data: back } = await user.GET('/account');
    expect(back?.id).toBe(me?.id);
  });

  it('refuses a user account, and an admin disabling itself', async () => {
    const org = await organizationWith(1);
    const { data: admin } = await server.client(org.adminKey).GET('/account');
    await expect(
      server
        .client(org.userKeys[0])
        .POST('/accounts/id/{id}/disable', { params: { path: { id: admin?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
    await expect(
      server
        .client(org.adminKey)
        .POST('/accounts/id/{id}/disable', { params: { path: { id: admin?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
    const { data: still } = await server.client(org.adminKey).GET('/account');
    expect(still?.disabled).toBe(false);
  });

  it("answers unknown_account for another organization's account", async () => {
    const org = await organizationWith(0);
    const { data: mine } = await server.client().GET('/account');
    await expect(
      server
        .client(org.adminKey)
        .POST('/accounts/id/{id}/disable', { params: { path: { id: mine?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_account' });
  });
});

describe('enableAccount', () => {
  it('refuses a user account', async () => {
    const org = await organizationWith(1);
    const { data: me } = await server.client(org.userKeys[0]).GET('/account');
    await expect(
      server
        .client(org.userKeys[0])
        .POST('/accounts/id/{id}/enable', { params: { path: { id: me?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
  });
});
