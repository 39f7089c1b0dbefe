import { walk } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { sharedTestServer, uniqueName } from '../helpers/test-server.js';

const server = sharedTestServer();

/** A fresh organization: its admin key, and the key and account id of a user. */
async function organization() {
  const name = uniqueName('org');
  const { apiKey: adminKey } = await server.services.provisioning.createOrganization(
    name,
    `${uniqueName('admin')}@example.test`,
  );
  const userKey = await server.newAccount(name, 'user');
  const { data: user } = await server.client(userKey).GET('/account');
  const { data: admin } = await server.client(adminKey).GET('/account');
  return { adminKey, userKey, userId: user?.id ?? '', adminId: admin?.id ?? '' };
}

/** The id part of a key `pwk_<id>_<secret>`. */
const idOf = (key: string) => key.slice(4, 31);

/** Every key a client lists, page by page. */
async function listAll(apiKey: string, query: { size?: number; account_id?: string } = {}) {
  const keys = [];
  for await (const key of walk(server.client(apiKey), '/api_keys', query)) keys.push(key);
  return keys;
}

describe('createApiKey', () => {
  it('creates a key for the caller, shows it once, and the key works with the role of its account', async () => {
    const org = await organization();
    const { data: created, response } = await server
      .client(org.userKey)
      .POST('/api_keys', { body: { name: 'CI deployments' } });
    expect(response.status).toBe(201);
    expect(created).toMatchObject({ account_id: org.userId, name: 'CI deployments', revoked: false });
    expect(created?.key).toMatch(/^pwk_[0-9A-Za-z]{27}_[A-Za-z0-9_-]{43}$/);
    expect(idOf(created?.key ?? '')).toBe(created?.id);
    const { data: me } = await server.client(created?.key).GET('/account');
    expect(me).toMatchObject({ id: org.userId, role: 'user' });
    // Never again: reading or listing the key shows no secret.
    const { data: read } = await server
      .client(org.userKey)
      .GET('/api_keys/id/{id}', { params: { path: { id: created?.id ?? '' } } });
    const { key: _secret, ...withoutSecret } = created as NonNullable<typeof created>;
    expect(read).toEqual(withoutSecret);
    const listed = await listAll(org.userKey);
    expect(JSON.stringify(listed)).not.toContain((created?.key ?? '').slice(32));
  });

  it('lets an admin create a key for another account of its organization', async () => {
    const org = await organization();
    const { data: created } = await server
      .client(org.adminKey)
      .POST('/api_keys', { body: { account_id: org.userId } });
    expect(created).toMatchObject({ account_id: org.userId });
    expect(created?.name).toBeUndefined();
    const { data: me } = await server.client(created?.key).GET('/account');
    expect(me?.id).toBe(org.userId);
  });

  it('refuses a user creating a key for another account', async () => {
    const org = await organization();
    await expect(
      server.client(org.userKey).POST('/api_keys', { body: { account_id: org.adminId } }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
  });

  it('answers unknown_account for an account of another organization', async () => {
    const org = await organization();
    const other = await organization();
    await expect(
      server.client(org.adminKey).POST('/api_keys', { body: { account_id: other.userId } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_account' });
  });

  it('refuses unknown members and an empty name', async () => {
    await expect(
      server.client().POST('/api_keys', { body: { role: 'admin' } as never }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_request_body' });
    await expect(server.client().POST('/api_keys', { body: { name: '' } })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request_body',
    });
  });
});

describe('listApiKeys', () => {
  it("lists every key of the organization to an admin, one account's with account_id", async () => {
    const org = await organization();
    const { data: extra } = await server.client(org.userKey).POST('/api_keys', { body: { name: 'extra' } });
    const all = await listAll(org.adminKey, { size: 1 });
    expect(all.map((k) => k.id).sort()).toEqual(
      [idOf(org.adminKey), idOf(org.userKey), extra?.id ?? ''].sort(),
    );
    const users = await listAll(org.adminKey, { account_id: org.userId });
    expect(users.map((k) => k.id).sort()).toEqual([idOf(org.userKey), extra?.id ?? ''].sort());
  });

  it('lists only its own keys to a user, and refuses it the keys of another account', async () => {
    const org = await organization();
    const mine = await listAll(org.userKey);
    expect(mine.map((k) => k.id)).toEqual([idOf(org.userKey)]);
    await expect(
      server.client(org.userKey).GET('/api_keys', { params: { query: { account_id: org.adminId } } }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
  });

  it('shows nothing of another organization', async () => {
    const org = await organization();
    const other = await organization();
    const { data } = await server
      .client(org.adminKey)
      .GET('/api_keys', { params: { query: { account_id: other.userId } } });
    expect(data?.elements).toEqual([]);
    await expect(
      server.client(org.adminKey).GET('/api_keys/id/{id}', { params: { path: { id: idOf(other.userKey) } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_api_key' });
  });
});

describe('getApiKey', () => {
  it('refuses a user the key of another account of its organization', async () => {
    const org = await organization();
    await expect(
      server.client(org.userKey).GET('/api_keys/id/{id}', { params: { path: { id: idOf(org.adminKey) } } }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
  });

  it('answers invalid_route_variable for an id that cannot be one', async () => {
    await expect(
      server.client().GET('/api_keys/id/{id}', { params: { path: { id: 'nope' } } }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'invalid_route_variable',
      message: 'not an api key id: nope',
    });
  });
});

describe('revokeApiKey', () => {
  it('ends the use of the key at once, even on a connection it just used', async () => {
    const org = await organization();
    const { data: created } = await server.client(org.userKey).POST('/api_keys', { body: { name: 'short' } });
    const key = server.client(created?.key);
    // Used right before: whatever the server remembers of the key must not outlive the revocation.
    await key.GET('/account');
    const { response } = await server
      .client(org.userKey)
      .POST('/api_keys/id/{id}/revoke', { params: { path: { id: created?.id ?? '' } } });
    expect(response.status).toBe(204);
    await expect(key.GET('/account')).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    const { data: read } = await server
      .client(org.userKey)
      .GET('/api_keys/id/{id}', { params: { path: { id: created?.id ?? '' } } });
    expect(read).toMatchObject({ revoked: true });
    expect(Date.now() - Date.parse(read?.revocation_time ?? '')).toBeLessThan(60_000);
    // Revoking it again changes nothing, its time included.
    await server
      .client(org.adminKey)
      .POST('/api_keys/id/{id}/revoke', { params: { path: { id: read?.id ?? '' } } });
    const { data: again } = await server
      .client(org.adminKey)
      .GET('/api_keys/id/{id}', { params: { path: { id: read?.id ?? '' } } });
    expect(again).toEqual(read);
  });

  it('lets a key revoke itself', async () => {
    const org = await organization();
    const key = server.client(org.userKey);
    await key.POST('/api_keys/id/{id}/revoke', { params: { path: { id: idOf(org.userKey) } } });
    await expect(key.GET('/account')).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it("lets an admin revoke a user's key, and refuses a user the admin's", async () => {
    const org = await organization();
    await expect(
      server
        .client(org.userKey)
        .POST('/api_keys/id/{id}/revoke', { params: { path: { id: idOf(org.adminKey) } } }),
    ).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
    await server.client(org.adminKey).GET('/account');
    await server
      .client(org.adminKey)
      .POST('/api_keys/id/{id}/revoke', { params: { path: { id: idOf(org.userKey) } } });
    await expect(server.client(org.userKey).GET('/account')).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
  });

  it('answers unknown_api_key for a key of another organization, and revokes nothing', async () => {
    const org = await organization();
    const other = await organization();
    await expect(
      server
        .client(org.adminKey)
        .POST('/api_keys/id/{id}/revoke', { params: { path: { id: idOf(other.userKey) } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_api_key' });
    const { data } = await server.client(other.userKey).GET('/account');
    expect(data?.id).toBe(other.userId);
  });
});
