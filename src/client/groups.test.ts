/**
 * The governance APIs on `createClient` and the GroupsApi calls this issue added: paths, bodies,
 * and which answers are unwrapped from `{data}` (create, info, seal) and which are flat (the
 * ownership proofs); `accounts.identity()` unwraps GET /identity.
 */
import { describe, expect, it } from 'vitest';
import { fakeFetch, json } from './fake-fetch.ts';
import { AccountsApi, createClient, GroupsApi, InvitationsApi, NamespacesApi, OwnerApi, SettingsApi } from './index.ts';

const G = 'ab'.repeat(32);
const A = 'cd'.repeat(32);

describe('governance APIs on the client', () => {
  it('createClient exposes namespaces, groups, owner, invitations, settings and accounts', () => {
    const node = createClient({ baseUrl: 'http://node.test', fetch: fakeFetch().fetch });
    expect(node.namespaces).toBeInstanceOf(NamespacesApi);
    expect(node.groups).toBeInstanceOf(GroupsApi);
    expect(node.owner).toBeInstanceOf(OwnerApi);
    expect(node.invitations).toBeInstanceOf(InvitationsApi);
    expect(node.settings).toBeInstanceOf(SettingsApi);
    expect(node.accounts).toBeInstanceOf(AccountsApi);
  });

  it('create, info and seal unwrap {data}; the proofs are read flat', async () => {
    const proof = { signerPublicKey: A, signedPayload: 'e30=', signature: 'AA==' };
    const fake = fakeFetch({
      'POST /admin-api/groups': () => json({ data: { groupId: G } }),
      [`GET /admin-api/groups/${G}`]: () => json({ data: { groupId: G, namespaceId: G, ownerOpCounter: 3 } }),
      [`POST /admin-api/groups/${G}/accounts/${A}/seal`]: () => json({ data: { accountRootEpoch: 0, ephemeralPublicKey: A, nonce: '00'.repeat(12), ciphertext: 'ff' } }),
      [`POST /admin-api/groups/${G}/issue-ownership-proof`]: () => json(proof),
      [`POST /admin-api/groups/${G}/issue-namespace-ownership-proof`]: () => json({ ...proof, founding: { founderAccountId: A, salt: G }, credential: '01' }),
      'GET /admin-api/identity': () => json({ data: { accountId: A, deviceId: G, publicKey: A, holdsAccountRoot: true } }),
    });
    const node = createClient({ baseUrl: 'http://node.test', fetch: fake.fetch });
    expect(await node.groups.create({ applicationId: A, name: 'g' })).toEqual({ groupId: G });
    expect(fake.requests[0].body).toEqual({ applicationId: A, name: 'g' });
    expect((await node.groups.info(G)).ownerOpCounter).toBe(3);
    expect((await node.groups.seal(G, A, 'beef')).accountRootEpoch).toBe(0);
    expect(fake.calls(`POST /admin-api/groups/${G}/accounts/${A}/seal`)[0].body).toEqual({ plaintext: 'beef' });
    const claim = { audience: 'aud', subject: 'sub', nonce: '0f'.repeat(16), expiresAtMs: 1 };
    expect(await node.groups.issueOwnershipProof(G, { ...claim, contextId: A })).toEqual(proof);
    expect(fake.calls(`POST /admin-api/groups/${G}/issue-ownership-proof`)[0].body).toEqual({ ...claim, contextId: A });
    expect((await node.groups.issueNamespaceOwnershipProof(G, claim)).founding.founderAccountId).toBe(A);
    expect((await node.accounts.identity()).accountId).toBe(A);
  });
});
