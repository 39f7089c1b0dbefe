import { describe, expect, it } from 'vitest';
import { sharedTestServer } from '../helpers/test-server.js';

const server = sharedTestServer();

describe('getOrganization', () => {
  it('answers the organization of the key', async () => {
    const { data } = await server.client().GET('/org');
    expect(data).toMatchObject({ name: 'default', disabled: false, non_essential_mail_opt_in: false });
    expect(data?.id).toMatch(/^[0-9A-Za-z]{27}$/);
    expect(data?.creation_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("answers each key's own organization", async () => {
    const other = await server.client(await server.newOrganization()).GET('/org');
    const mine = await server.client().GET('/org');
    expect(other.data?.id).not.toBe(mine.data?.id);
    expect(other.data?.name).not.toBe('default');
  });
});
