/**
 * ProofsService through a real Governance on a MemoryStore: sealing to this node's account and to
 * a foreign account whose root entered the record through a device credential (each opened with
 * the root's seed), the one 404 for unknown targets, the 403 for a non-member caller; namespace and
 * context ownership proofs whose signatures verify with node:crypto over domain ‖ payload, the
 * payload key order and clamp, and each refusal.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { encodeScopeProof, parseCredential } from '../../identity/credentials.ts';
import { encodeCredential } from '../../identity/pairing.ts';
import { NodeIdentity } from '../../identity/identity.ts';
import { accountIdOf, deviceIdOf, namespaceIdOf } from '../../crypto/ids.ts';
import { emptyNamespace } from '../genesis.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../crypto/keys.ts';
import { HearthError } from '../../errors.ts';
import { EventBus } from '../../bus.ts';
import { MemoryStore } from '../../store/memory.ts';
import { MembersService } from '../groups/members-service.ts';
import { GroupService } from '../groups/service.ts';
import { Governance } from '../log.ts';
import { NamespaceService } from '../namespaces/service.ts';
import { registerDeviceOps } from '../../accounts/device-ops.ts';
import { createAppliers } from '../ops.ts';
import { OwnerService } from '../owner/service.ts';
import { MAX_PROOF_LIFETIME_MS, OWNERSHIP_PROOF_DOMAIN } from './ownership.ts';
import { openSealed } from '../../crypto/seal.ts';
import { parsePlaintext, ProofsService } from './service.ts';
import { ed25519SeedOfPkcs8 } from '../../crypto/x25519.ts';

const APP = 'ab'.repeat(32);
const NOW = 1_800_000_000_000;
const clock = { now: () => NOW };
const CONTEXT = 'c1'.repeat(32);

async function build() {
  const store = new MemoryStore();
  const identity = await NodeIdentity.load(store, generateKeyPairSync('ed25519').privateKey, clock.now());
  const appliers = createAppliers(registerDeviceOps);
  // stands in for context creation (a later issue): registers a context in a group
  appliers.register('test.context.registered', ({ ns, op }) => {
    ns.groups[op.groupId]!.contexts[String(op.body.contextId)] = { metadata: null, registeredAt: op.timestampMs };
  });
  const governance = new Governance({ store, identity, clock, bus: new EventBus(), appliers });
  await governance.load();
  const namespaces = new NamespaceService({ governance, identity, clock });
  const groups = new GroupService({ governance, identity, namespaces });
  const stored = (await store.space<{ root: { privateKey: string } }>('identity').get('node'))!;
  return {
    identity,
    governance,
    namespaces,
    groups,
    members: new MembersService({ governance, identity }),
    owner: new OwnerService({ governance, identity }),
    proofs: new ProofsService({ governance, identity, clock }),
    rootSeed: ed25519SeedOfPkcs8(stored.root.privateKey),
  };
}

function refusal(f: () => unknown): { kind: string; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof HearthError) return { kind: e.kind, message: e.message };
    throw e;
  }
  return { kind: 'ok', message: '' };
}

/** A nodeless account: its root key pair, its id, a signer and its seed. */
function stranger() {
  const pair = generateKeyPair('ed25519');
  const key = privateKeyObject(pair.privateKey);
  return {
    rootKey: pair.publicKey,
    account: accountIdOf(Buffer.from(pair.publicKey, 'hex')),
    sign: (m: Uint8Array) => ed25519Sign(key, m),
    seed: ed25519SeedOfPkcs8(pair.privateKey),
  };
}

const claim = (over: Partial<{ audience: string; subject: string; nonce: string; expiresAtMs: number }> = {}) => ({
  audience: 'https://app.example',
  subject: 'user:alice',
  nonce: '0f'.repeat(16),
  expiresAtMs: NOW + 60_000,
  ...over,
});

function verifies(proof: { signerPublicKey: string; signedPayload: string; signature: string }): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(proof.signerPublicKey, 'hex').toString('base64url') }, format: 'jwk' });
  const signed = Buffer.concat([Buffer.from('calimero.ownership-claim.v1\0', 'utf8'), Buffer.from(proof.signedPayload, 'base64')]);
  return verify(null, signed, key, Buffer.from(proof.signature, 'base64'));
}

let n: Awaited<ReturnType<typeof build>>;
let nsId: string;

beforeEach(async () => {
  n = await build();
  nsId = (await n.namespaces.found({ applicationId: APP })).id;
});

describe('seal', () => {
  it('seals to this node\'s own account; the root seed opens it', () => {
    const env = n.proofs.seal(nsId, n.identity.accountId, Buffer.from('hello root'));
    expect(env.accountRootEpoch).toBe(0);
    expect(openSealed(n.rootSeed, n.identity.accountId, env).toString()).toBe('hello root');
  });

  it('seals to a foreign account whose root a linked device credential put on record', async () => {
    const s = stranger();
    await n.members.addMembers(nsId, [{ identity: s.account, role: 'Member' }]);
    const unknown = refusal(() => n.proofs.seal(nsId, s.account, Buffer.from('x')));
    expect(unknown).toEqual({ kind: 'not_found', message: `group ${nsId} knows no account ${s.account} with a root key on record` });
    // the stranger's device link carries a credential its root signed (admin-wire-b §2.15)
    const deviceId = deviceIdOf(s.account, randomBytes(16));
    const key = generateKeyPair('ed25519').publicKey;
    const credential = encodeCredential({ rootPublicKey: s.rootKey, deviceId, signPublicKey: key, kemPublicKey: key, deviceEpoch: 0 }, s.sign);
    const scope = encodeScopeProof({ rootPublicKey: s.rootKey, deviceId, scopeEpoch: 0, applications: 'all' }, s.sign);
    await n.governance.submit(nsId, nsId, 'account.device.linked', { account: s.account, deviceId, signingKey: key, credential, scope });
    expect(n.governance.namespace(nsId)!.accountRoots?.[s.account]).toBe(s.rootKey);
    const env = n.proofs.seal(nsId, s.account, Buffer.from('for the stranger'));
    expect(openSealed(s.seed, s.account, env).toString()).toBe('for the stranger');
    expect(() => openSealed(n.rootSeed, s.account, env)).toThrow();
  });

  it('records the founder root at genesis and the signer root of a verified root proof', async () => {
    expect(n.governance.namespace(nsId)!.accountRoots).toEqual({ [n.identity.accountId]: n.identity.rootPublicKey });
    await n.owner.changeNamespaceAdmin(nsId, n.identity.accountId);
    expect(n.governance.namespace(nsId)!.accountRoots?.[n.identity.accountId]).toBe(n.identity.rootPublicKey);
    // a genesis naming a root that does not derive the founder is refused, and nothing is kept
    const salt = 'aa'.repeat(32);
    const id = namespaceIdOf(n.identity.accountId, salt);
    const genesis = { salt, applicationId: APP, appKey: APP };
    const forged = n.governance.submitGenesis(id, { ...genesis, founderRootKey: stranger().rootKey });
    await expect(forged).rejects.toThrow("founderRootKey does not derive the founder's account");
    expect(n.governance.namespace(id)).toBeUndefined();
  });

  it('answers one 404 for a non-member target and a member without a root on record', async () => {
    const member = 'dd'.repeat(32);
    await n.members.addMembers(nsId, [{ identity: member, role: 'Member' }]);
    const outsider = 'ee'.repeat(32);
    const a = refusal(() => n.proofs.seal(nsId, member, Buffer.from('x')));
    const b = refusal(() => n.proofs.seal(nsId, outsider, Buffer.from('x')));
    expect(a.kind).toBe('not_found');
    expect(b).toEqual({ kind: 'not_found', message: `group ${nsId} knows no account ${outsider} with a root key on record` });
    expect(refusal(() => n.proofs.seal('f'.repeat(64), member, Buffer.from('x'))).kind).toBe('not_found');
  });

  it('refuses a caller that is not a member of the group (403)', async () => {
    const other = 'dd'.repeat(32);
    const sub = await n.groups.create({ applicationId: APP, parentGroupId: nsId, visibility: 'restricted' });
    await n.members.addMembers(sub, [{ identity: other, role: 'Admin' }]);
    await n.owner.transferOwnership(sub, other);
    await n.members.leave(sub);
    expect(refusal(() => n.proofs.seal(sub, other, Buffer.from('x')))).toEqual({ kind: 'forbidden', message: 'not a member of group' });
  });

  it('parses plaintext: non-empty, even-length hex, at most 64 KiB decoded', () => {
    expect(parsePlaintext('00ff').toString('hex')).toBe('00ff');
    expect(parsePlaintext('ab'.repeat(65536)).length).toBe(65536);
    for (const bad of ['', 'abc', 'zz', 'ab'.repeat(65537)]) expect(refusal(() => parsePlaintext(bad)).kind).toBe('bad_request');
  });
});

describe('ownership proofs', () => {
  it('namespace proof: verifies over domain ‖ payload, payload keys in order, founding and credential attached', () => {
    const proof = n.proofs.issueNamespaceOwnershipProof(nsId, claim());
    expect(proof.signerPublicKey).toBe(n.identity.publicKey);
    expect(verifies(proof)).toBe(true);
    expect(OWNERSHIP_PROOF_DOMAIN.length).toBe(28);
    const text = Buffer.from(proof.signedPayload, 'base64').toString('utf8');
    expect(text).toBe(
      `{"v":1,"audience":"https://app.example","group_id":"${nsId}","issuer_identity":"${n.identity.publicKey}","context_id":"","subject":"user:alice","nonce":"${'0f'.repeat(16)}","issued_at_ms":${NOW},"expires_at_ms":${NOW + 60_000}}`,
    );
    expect(proof.founding).toEqual(n.governance.namespace(nsId)!.founding);
    const cred = parseCredential(proof.credential);
    expect(cred).toMatchObject({ accountId: n.identity.accountId, deviceId: n.identity.deviceId, signingKey: n.identity.publicKey });
  });

  it('clamps expires_at_ms to issue time + 5 min and refuses an expiry not in the future', () => {
    const far = n.proofs.issueNamespaceOwnershipProof(nsId, claim({ expiresAtMs: Number.MAX_SAFE_INTEGER }));
    expect(JSON.parse(Buffer.from(far.signedPayload, 'base64').toString()).expires_at_ms).toBe(NOW + MAX_PROOF_LIFETIME_MS);
    expect(refusal(() => n.proofs.issueNamespaceOwnershipProof(nsId, claim({ expiresAtMs: NOW }))).message).toBe('ownership proof invalid: expires_at_ms must be in the future');
  });

  it('refuses bad claim fields with 400 OwnershipProofInvalid', () => {
    const bad = [
      claim({ audience: '' }),
      claim({ audience: 'a'.repeat(257) }),
      claim({ subject: '' }),
      claim({ subject: 's'.repeat(513) }),
      claim({ subject: 'line\nbreak' }),
      claim({ nonce: 'ab'.repeat(15) }),
      claim({ nonce: 'ab'.repeat(65) }),
      claim({ nonce: `${'ab'.repeat(16)}a` }),
      claim({ nonce: 'zz'.repeat(16) }),
    ];
    for (const c of bad) {
      const r = refusal(() => n.proofs.issueNamespaceOwnershipProof(nsId, c));
      expect(r.kind).toBe('bad_request');
      expect(r.message).toMatch(/^ownership proof invalid: /);
    }
    expect(refusal(() => n.proofs.issueNamespaceOwnershipProof(nsId, claim({ audience: 'a'.repeat(256), subject: 's'.repeat(512) }))).kind).toBe('ok');
  });

  it('namespace proof on a subgroup is 400; a node that is not a direct admin is 403', async () => {
    const sub = await n.groups.create({ applicationId: APP, parentGroupId: nsId });
    expect(refusal(() => n.proofs.issueNamespaceOwnershipProof(sub, claim())).message).toBe('ownership proof invalid: group_id must reference a namespace root group');
    await n.members.addMembers(nsId, [{ identity: 'dd'.repeat(32), role: 'Admin' }]);
    await n.members.setRole(nsId, n.identity.accountId, 'Member');
    expect(refusal(() => n.proofs.issueNamespaceOwnershipProof(nsId, claim())).kind).toBe('forbidden');
  });

  it('context proof: a context in a subgroup proves under the root; outside the tree 400, unknown 404', async () => {
    const sub = await n.groups.create({ applicationId: APP, parentGroupId: nsId });
    await n.governance.submit(nsId, sub, 'test.context.registered', { contextId: CONTEXT });
    const proof = n.proofs.issueOwnershipProof(nsId, CONTEXT, claim());
    expect(verifies(proof)).toBe(true);
    expect(JSON.parse(Buffer.from(proof.signedPayload, 'base64').toString())).toMatchObject({ group_id: nsId, context_id: CONTEXT });
    expect(n.proofs.issueOwnershipProof(sub, CONTEXT, claim()).signerPublicKey).toBe(n.identity.publicKey);

    const sibling = await n.groups.create({ applicationId: APP, parentGroupId: nsId });
    expect(refusal(() => n.proofs.issueOwnershipProof(sibling, CONTEXT, claim())).kind).toBe('bad_request');
    const elsewhere = (await n.namespaces.found({ applicationId: APP })).id;
    expect(refusal(() => n.proofs.issueOwnershipProof(elsewhere, CONTEXT, claim())).message).toMatch(/not within the namespace rooted at/);
    expect(refusal(() => n.proofs.issueOwnershipProof(nsId, 'c2'.repeat(32), claim())).kind).toBe('not_found');
  });
});
