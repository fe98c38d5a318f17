/**
 * AccountService against a real Governance on a MemoryStore: a revocation of this node's own device
 * that arrives from another device of the account (replication) sets NodeIdentity `revokedFrom`.
 */
import { expect, it } from 'vitest';
import { systemClock } from '../clock.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../crypto/keys.ts';
import { EventBus } from '../bus.ts';
import { Governance, opIdOf } from '../governance/log.ts';
import { NamespaceService } from '../governance/namespaces/service.ts';
import { createAppliers } from '../governance/ops.ts';
import type { UnsignedOp } from '../governance/types.ts';
import { MemoryStore } from '../store/memory.ts';
import { NodeIdentity } from '../identity/identity.ts';
import { encodeCredential } from '../identity/pairing.ts';
import { registerDeviceOps } from './device-ops.ts';
import { AccountService } from './service.ts';

it('revokedFrom appears once a revocation of this node\'s device reaches it', async () => {
  const store = new MemoryStore();
  const identity = await NodeIdentity.load(store, privateKeyObject(generateKeyPair('ed25519').privateKey), 1);
  const governance = new Governance({ store, identity, clock: systemClock, bus: new EventBus(), appliers: createAppliers(registerDeviceOps) });
  const accounts = new AccountService({ store, identity, clock: systemClock, governance });
  await accounts.load();
  const ns = await new NamespaceService({ governance, identity, clock: systemClock }).found({ applicationId: 'ee'.repeat(32) });
  expect(accounts.revokedFrom()).toBeUndefined();
  await expect(accounts.revoke(ns.id, identity.deviceId)).rejects.toMatchObject({ kind: 'forbidden' });

  // another device of this account: its credential (signed by the account root) binds its key
  const other = generateKeyPair('ed25519');
  const otherDevice = 'd1'.repeat(32);
  const credential = encodeCredential(
    { rootPublicKey: identity.rootPublicKey, deviceId: otherDevice, signPublicKey: other.publicKey, kemPublicKey: 'ee'.repeat(32), deviceEpoch: 0 },
    (m) => identity.signWithRoot(m),
  );
  const unsigned: UnsignedOp = {
    namespaceId: ns.id,
    groupId: ns.id,
    seq: (BigInt(ns.seq) + 1n).toString(),
    parents: ns.heads,
    signer: other.publicKey,
    account: identity.accountId,
    nonce: '1',
    kind: 'account.device.revoked',
    body: { account: identity.accountId, deviceId: identity.deviceId },
    timestampMs: 9_000,
    credential,
  };
  const id = opIdOf(unsigned);
  const result = await governance.ingest(ns.id, [{ ...unsigned, id, signature: ed25519Sign(privateKeyObject(other.privateKey), Buffer.from(id, 'hex')) }]);
  expect(result.rejected).toEqual([]);
  expect(accounts.revokedFrom()).toEqual({ accountId: identity.accountId, deviceId: identity.deviceId });
});
