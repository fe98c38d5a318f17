/**
 * The governance APIs on `createClient` and the GroupsApi calls this issue added: paths, bodies,
 * and which answers are unwrapped from `{data}` (create, info, seal) and which are flat (the
 * ownership proofs); `accounts.identity()` unwraps GET /identity.
 */
import { describe, expect, it, vi } from 'vitest';
import { fakeFetch, json } from './fake-fetch.ts';
import { AccountsApi, createClient, DEFAULT_TIMEOUT_MS, GroupsApi, InvitationsApi, NamespacesApi, OwnerApi, PEER_WAIT_TIMEOUT_MS, SettingsApi } from './index.ts';

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

describe('calls that wait for peers get a deadline longer than the node’s own waits', () => {
  /** a fetch that answers only when its signal aborts (rejecting), recording each call's signal */
  function hangingFetch(): { fetch: typeof fetch; signals: AbortSignal[] } {
    const signals: AbortSignal[] = [];
    const fetchFn = ((_url: unknown, init?: RequestInit) => {
      const signal = init!.signal!;
      signals.push(signal);
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }) as typeof fetch;
    return { fetch: fetchFn, signals };
  }

  it('join (namespace and group) and group sync wait PEER_WAIT_TIMEOUT_MS; other calls the client default; an explicit timeout wins', async () => {
    vi.useFakeTimers();
    try {
      const hang = hangingFetch();
      const node = createClient({ baseUrl: 'http://node.test', fetch: hang.fetch });
      const invitation = { invitation: {}, inviter_signature: '' } as unknown as Parameters<typeof node.invitations.joinGroup>[0];
      const calls = [
        node.invitations.joinNamespace(G, invitation),
        node.invitations.joinGroup(invitation),
        node.groups.sync(G),
        node.groups.info(G),
        node.groups.sync(G, { timeoutMs: 1_000 }),
      ].map((p) => p.then(() => 'answered', (e: Error) => e.name));
      await vi.advanceTimersByTimeAsync(1_001);
      expect(hang.signals.map((s) => s.aborted)).toEqual([false, false, false, false, true]);
      await vi.advanceTimersByTimeAsync(DEFAULT_TIMEOUT_MS);
      expect(hang.signals.map((s) => s.aborted)).toEqual([false, false, false, true, true]);
      await vi.advanceTimersByTimeAsync(PEER_WAIT_TIMEOUT_MS - DEFAULT_TIMEOUT_MS - 1_000);
      expect(hang.signals.map((s) => s.aborted)).toEqual([true, true, true, true, true]);
      expect(await Promise.all(calls)).toEqual(Array(5).fill('TimeoutError'));
      expect(PEER_WAIT_TIMEOUT_MS).toBeGreaterThan(20_000 + 15_000);
    } finally {
      vi.useRealTimers();
    }
  });
});
