/**
 * Root proofs after a root-key rotation (issue #17 finding 10): the proof carries the handoff chain
 * from the genesis key to the signing epoch, checked with the same walk as device certificates.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handoffPayload } from '../identity/account-proof.ts';
import { accountIdOf } from '../crypto/ids.ts';
import { ed25519Sign, publicKeyOf } from '../crypto/keys.ts';
import { HearthError } from '../errors.ts';
import { recordRootProof } from './proofs/roots.ts';
import { encodeSignedOwnerOp, OWNER_OP_KIND, ownerOpMessage, verifyRootProof, type OwnerOpAuthorization, type RootKeyHandoff } from './root-guard.ts';
import type { GroupState, NamespaceState } from './types.ts';

const NS = '11'.repeat(32);
const DIGEST = '33'.repeat(32);
const key = (): KeyObject => generateKeyPairSync('ed25519').privateKey;

/** An account whose root rotated `epochs` times: its keys, epoch 0 first, and the signed chain. */
function rotatedAccount(epochs: number) {
  const keys = Array.from({ length: epochs + 1 }, key);
  const account = accountIdOf(Buffer.from(publicKeyOf(keys[0]), 'hex'));
  const handoffs: RootKeyHandoff[] = [];
  for (let e = 0; e < epochs; e++) {
    const h = { account, fromEpoch: e, newRootKey: publicKeyOf(keys[e + 1]) };
    handoffs.push({ ...h, signature: ed25519Sign(keys[e], handoffPayload({ account, fromEpoch: e, newRootSignPk: h.newRootKey })) });
  }
  return { keys, account, handoffs };
}

function proof(a: ReturnType<typeof rotatedAccount>, epoch: number, signer: KeyObject = a.keys[epoch], handoffs = a.handoffs): string {
  const auth: OwnerOpAuthorization = { account: a.account, namespaceId: NS, groupId: NS, kind: OWNER_OP_KIND.TransferOwnership, opDigest: DIGEST, counter: 0n, keyEpoch: epoch };
  return encodeSignedOwnerOp({ rootKey: publicKeyOf(a.keys[0]), handoffs, auth, signature: ed25519Sign(signer, ownerOpMessage(auth)) });
}

const state = () => {
  const group = { id: NS, ownerOpCounter: '0' } as GroupState;
  const ns = { id: NS, groups: { [NS]: group } } as unknown as NamespaceState;
  return { ns, group };
};
const check = (ns: NamespaceState, group: GroupState, account: string, rootProof: string) =>
  verifyRootProof({ ns, group, kind: 'TransferOwnership', opDigest: DIGEST, account, rootProof });

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof HearthError) return `${e.kind}: ${e.message}`;
    throw e;
  }
  return 'accepted';
}

describe('root proofs after a root rotation', () => {
  it('accepts a proof signed by the current root through its handoff chain', () => {
    const a = rotatedAccount(2);
    const { ns, group } = state();
    expect(check(ns, group, a.account, proof(a, 2)).auth.keyEpoch).toBe(2);
    expect(check(ns, group, a.account, proof(a, 1)).auth.keyEpoch).toBe(1);
  });

  it('refuses a chain with a handoff not signed by the key before it, or a signature by another epoch’s key', () => {
    const a = rotatedAccount(2);
    const { ns, group } = state();
    const forged = [a.handoffs[0], { ...a.handoffs[1], signature: ed25519Sign(key(), handoffPayload({ account: a.account, fromEpoch: 1, newRootSignPk: a.handoffs[1].newRootKey })) }];
    expect(refusal(() => check(ns, group, a.account, proof(a, 2, a.keys[2], forged)))).toMatch(/^bad_request: rootProof: handoff 1 is not signed/);
    expect(refusal(() => check(ns, group, a.account, proof(a, 2, a.keys[0])))).toBe('bad_request: rootProof: invalid root signature');
    expect(refusal(() => check(ns, group, a.account, proof(a, 3, a.keys[2])))).toMatch(/^bad_request: rootProof: key epoch 3 is beyond/);
  });

  it('refuses a proof at an epoch below the one recorded for the account (a rotated-out key)', () => {
    const a = rotatedAccount(1);
    const { ns, group } = state();
    recordRootProof(ns, check(ns, group, a.account, proof(a, 1)));
    expect(ns.accountRootEpochs).toEqual({ [a.account]: 1 });
    expect(refusal(() => check(ns, group, a.account, proof(a, 0)))).toMatch(/^bad_request: rootProof: signed at root key epoch 0, below epoch 1/);
  });
});
