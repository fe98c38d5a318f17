/**
 * Seal, ownership proofs and the group scope end to end (admin spec "Groups"; admin-wire-b
 * §4.19–§4.20): a real node driven through the SDK (`client.groups`, `client.namespaces`, ...).
 * A sealed envelope is opened with the recipient root's seed; proof signatures are verified with
 * node:crypto over domain ‖ payload; every refusal is checked by status; and a namespace the node's
 * account has left answers 404 on its `/groups/{g}` routes like an unknown one.
 */
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeScopeProof, parseCredential } from '../../../src/identity/credentials.ts';
import { encodeCredential } from '../../../src/identity/pairing.ts';
import { HttpError, type Client } from '../../../src/client/index.ts';
import { accountIdOf, deviceIdOf } from '../../../src/crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../../src/crypto/keys.ts';
import { openSealed } from '../../../src/crypto/seal.ts';
import { ed25519SeedOfPkcs8 } from '../../../src/crypto/x25519.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';

const APP = '5e'.repeat(32);
const OTHER = 'e1'.repeat(32);
let node: TestNode;
let c: Client;
let me: { accountId: string; publicKey: string; deviceId: string | null };

async function status(p: Promise<unknown>): Promise<{ status: number; error: string }> {
  try {
    await p;
    return { status: 200, error: '' };
  } catch (e) {
    if (!(e instanceof HttpError)) throw e;
    return { status: e.status, error: e.errorText ?? e.bodyText };
  }
}

/** A nodeless account with one device: its root seed, and the proofs that link the device. */
function foreignAccount() {
  const root = generateKeyPair('ed25519');
  const sign = (m: Uint8Array) => ed25519Sign(privateKeyObject(root.privateKey), m);
  const account = accountIdOf(Buffer.from(root.publicKey, 'hex'));
  const deviceId = deviceIdOf(account, randomBytes(16));
  const key = generateKeyPair('ed25519').publicKey;
  return {
    account,
    seed: ed25519SeedOfPkcs8(root.privateKey),
    credential: encodeCredential({ rootPublicKey: root.publicKey, deviceId, signPublicKey: key, kemPublicKey: key, deviceEpoch: 0 }, sign),
    scope: encodeScopeProof({ rootPublicKey: root.publicKey, deviceId, scopeEpoch: 0, applications: 'all' }, sign),
  };
}

function verifies(p: { signerPublicKey: string; signedPayload: string; signature: string }): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(p.signerPublicKey, 'hex').toString('base64url') }, format: 'jwk' });
  return verify(null, Buffer.concat([Buffer.from('calimero.ownership-claim.v1\0'), Buffer.from(p.signedPayload, 'base64')]), key, Buffer.from(p.signature, 'base64'));
}

const claim = { audience: 'https://relying.example', subject: 'did:example:alice', nonce: '7a'.repeat(16), expiresAtMs: Date.now() + 3_600_000 };

/** A subgroup this node's account created, handed to OTHER, then left: in scope, not a member. */
async function leftSubgroup(ns: string): Promise<string> {
  const { groupId } = await c.groups.create({ applicationId: APP, parentGroupId: ns, visibility: 'restricted' });
  await c.groups.addMembers(groupId, [{ identity: OTHER, role: 'Admin' }]);
  await c.owner.transferOwnership(groupId, { newOwner: OTHER });
  await c.groups.leave(groupId);
  return groupId;
}

beforeAll(async () => {
  node = await startTestNode();
  c = await adminClient(node);
  me = await c.accounts.identity();
});
afterAll(async () => node?.destroy());

describe('POST /groups/{g}/accounts/{account}/seal', () => {
  it('seals to this node\'s account: {data} envelope with epoch, 32-byte ephemeral key, 12-byte nonce, tagged ciphertext', async () => {
    const { namespaceId } = await c.namespaces.create({ applicationId: APP });
    const res = await c.http.json<{ data: Record<string, unknown> }>(`/admin-api/groups/${namespaceId}/accounts/${me.accountId}/seal`, { method: 'POST', body: { plaintext: 'c0ffee' } });
    expect(Object.keys(res.data)).toEqual(['accountRootEpoch', 'ephemeralPublicKey', 'nonce', 'ciphertext']);
    expect(res.data.accountRootEpoch).toBe(0);
    expect(res.data.ephemeralPublicKey).toMatch(/^[0-9a-f]{64}$/);
    expect(res.data.nonce).toMatch(/^[0-9a-f]{24}$/);
    expect(res.data.ciphertext).toMatch(/^[0-9a-f]{38}$/); // 3 bytes + 16-byte tag
  });

  it('seals to a member account whose root came in with its device credential; its root opens it', async () => {
    const { namespaceId } = await c.namespaces.create({ applicationId: APP });
    const x = foreignAccount();
    await c.groups.addMembers(namespaceId, [{ identity: x.account, role: 'Member' }]);
    const before = await status(c.groups.seal(namespaceId, x.account, '00'));
    expect(before).toEqual({ status: 404, error: `group ${namespaceId} knows no account ${x.account} with a root key on record` });
    await c.namespaces.linkDevice(namespaceId, { credential: x.credential, scope: x.scope });
    const plaintext = randomBytes(4096);
    const env = await c.groups.seal(namespaceId, x.account, plaintext.toString('hex'));
    expect(openSealed(x.seed, x.account, env).equals(plaintext)).toBe(true);
  });

  it('refuses: bad plaintext or unknown field 400, bad ids 400, unknown target or group 404, caller not a member 403', async () => {
    const { namespaceId } = await c.namespaces.create({ applicationId: APP });
    const path = `/admin-api/groups/${namespaceId}/accounts/${me.accountId}/seal`;
    for (const body of [{ plaintext: '' }, { plaintext: 'abc' }, { plaintext: 'zz' }, { plaintext: 'ab'.repeat(65537) }, { plaintext: 'ab', extra: 1 }, {}]) {
      expect((await status(c.http.send(path, { method: 'POST', body }))).status).toBe(400);
    }
    expect((await status(c.groups.seal(namespaceId, me.accountId, 'ab'.repeat(65536)))).status).toBe(200);
    expect((await status(c.groups.seal(namespaceId, 'not-an-account', 'ab'))).status).toBe(400);
    expect((await status(c.groups.seal('nope', me.accountId, 'ab'))).status).toBe(400);
    expect((await status(c.groups.seal(namespaceId, OTHER, 'ab'))).status).toBe(404);
    expect((await status(c.groups.seal('f'.repeat(64), me.accountId, 'ab'))).status).toBe(404);
    const sub = await leftSubgroup(namespaceId);
    expect(await status(c.groups.seal(sub, OTHER, 'ab'))).toEqual({ status: 403, error: 'not a member of group' });
  });
});

describe('ownership proofs', () => {
  it('issue-namespace-ownership-proof answers flat; the signature verifies; founding and credential identify the founder\'s node', async () => {
    const created = await c.namespaces.create({ applicationId: APP });
    const body = await c.http.json<Record<string, unknown>>(`/admin-api/groups/${created.namespaceId}/issue-namespace-ownership-proof`, { method: 'POST', body: claim });
    expect(Object.keys(body).sort()).toEqual(['credential', 'founding', 'signature', 'signedPayload', 'signerPublicKey']);
    const proof = await c.groups.issueNamespaceOwnershipProof(created.namespaceId, claim);
    expect(proof.signerPublicKey).toBe(me.publicKey);
    expect(verifies(proof)).toBe(true);
    const payload = JSON.parse(Buffer.from(proof.signedPayload, 'base64').toString('utf8'));
    expect(Object.keys(payload)).toEqual(['v', 'audience', 'group_id', 'issuer_identity', 'context_id', 'subject', 'nonce', 'issued_at_ms', 'expires_at_ms']);
    expect(payload).toMatchObject({ v: 1, group_id: created.namespaceId, issuer_identity: me.publicKey, context_id: '', subject: claim.subject, nonce: claim.nonce });
    expect(payload.expires_at_ms - payload.issued_at_ms).toBe(5 * 60 * 1000); // clamped
    expect(proof.founding).toEqual(created.founding);
    expect(parseCredential(proof.credential)).toMatchObject({ accountId: me.accountId, deviceId: me.deviceId, signingKey: me.publicKey });
  });

  it('refuses: bad fields or unknown field 400, subgroup 400, past expiry 400, not an admin 403, unknown context 404, out of scope 404', async () => {
    const { namespaceId } = await c.namespaces.create({ applicationId: APP });
    const nsProof = (body: unknown, g = namespaceId) => status(c.http.send(`/admin-api/groups/${g}/issue-namespace-ownership-proof`, { method: 'POST', body }));
    for (const bad of [{ ...claim, audience: '' }, { ...claim, subject: 's'.repeat(513) }, { ...claim, nonce: 'abc' }, { ...claim, requester: me.accountId }, { ...claim, expiresAtMs: -1 }]) {
      expect((await nsProof(bad)).status).toBe(400);
    }
    const expired = await nsProof({ ...claim, expiresAtMs: 1 });
    expect(expired).toEqual({ status: 400, error: 'ownership proof invalid: expires_at_ms must be in the future' });
    const { groupId: sub } = await c.groups.create({ applicationId: APP, parentGroupId: namespaceId });
    expect((await nsProof(claim, sub)).error).toBe('ownership proof invalid: group_id must reference a namespace root group');
    expect((await status(c.groups.issueOwnershipProof(namespaceId, { ...claim, contextId: 'c4'.repeat(32) }))).status).toBe(404);
    expect((await status(c.groups.issueOwnershipProof(namespaceId, { ...claim, contextId: 'bad' }))).status).toBe(400);
    expect((await status(c.http.send(`/admin-api/groups/${namespaceId}/issue-ownership-proof`, { method: 'POST', body: claim }))).status).toBe(400);
    expect((await status(c.groups.issueNamespaceOwnershipProof('f'.repeat(64), claim))).status).toBe(404);
    await c.groups.addMembers(namespaceId, [{ identity: OTHER, role: 'Admin' }]);
    await c.groups.setMemberRole(namespaceId, me.accountId, 'Member');
    expect((await status(c.groups.issueNamespaceOwnershipProof(namespaceId, claim))).status).toBe(403);
  });
});

describe('group routes follow the account session\'s scope', () => {
  it('a namespace this account left answers 404 on every /groups/{g} route, its subgroups included', async () => {
    const { namespaceId } = await c.namespaces.create({ applicationId: APP });
    const { groupId: sub } = await c.groups.create({ applicationId: APP, parentGroupId: namespaceId });
    await c.groups.addMembers(namespaceId, [{ identity: OTHER, role: 'Admin' }]);
    await c.groups.addMembers(sub, [{ identity: OTHER, role: 'Admin' }]);
    await c.owner.transferOwnership(sub, { newOwner: OTHER });
    await c.owner.transferOwnership(namespaceId, { newOwner: OTHER });
    expect((await c.groups.info(sub)).groupId).toBe(sub); // still in scope
    await c.namespaces.leave(namespaceId);

    const calls: [string, () => Promise<unknown>][] = [
      ['info', () => c.groups.info(namespaceId)],
      ['subgroup info', () => c.groups.info(sub)],
      ['members', () => c.groups.members(namespaceId)],
      ['contexts', () => c.groups.contexts(sub)],
      ['subgroups', () => c.groups.subgroups(namespaceId)],
      ['member-devices', () => c.groups.memberDevices(namespaceId)],
      ['add members', () => c.groups.addMembers(sub, [{ identity: me.accountId, role: 'Member' }])],
      ['create subgroup', () => c.groups.create({ applicationId: APP, parentGroupId: namespaceId })],
      ['join via inheritance', () => c.groups.joinViaInheritance(sub)],
      ['capabilities', () => c.settings.memberCapabilities(namespaceId, OTHER)],
      ['invite', () => c.invitations.inviteToGroup(namespaceId)],
      ['seal', () => c.groups.seal(namespaceId, OTHER, 'ab')],
      ['ownership proof', () => c.groups.issueNamespaceOwnershipProof(namespaceId, claim)],
    ];
    for (const [name, call] of calls) expect([name, (await status(call())).status]).toEqual([name, 404]);
  });
});
