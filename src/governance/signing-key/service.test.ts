import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NodeIdentity } from '../../identity/identity.ts';
import { keyFromSeed } from '../../crypto/seeded-keys.ts';
import { HearthError } from '../../errors.ts';
import { MemoryStore } from '../../store/memory.ts';
import type { Governance } from '../log.ts';
import type { NamespaceState } from '../types.ts';
import { newGroup } from '../genesis.ts';
import { parseSigningSecret, SigningKeyService } from './service.ts';

const G = 'a'.repeat(64);
const seedHex = (byte: number) => byte.toString(16).padStart(2, '0').repeat(32);

async function setup() {
  const store = new MemoryStore();
  await store.open();
  const identity = await NodeIdentity.load(store, generateKeyPairSync('ed25519').privateKey, 1);
  const me = identity.accountId;
  const device = keyFromSeed(Buffer.from(seedHex(5), 'hex'));
  const revoked = keyFromSeed(Buffer.from(seedHex(6), 'hex'));
  const other = keyFromSeed(Buffer.from(seedHex(7), 'hex'));
  const group = newGroup({ id: G, namespaceId: G, parentId: null, owner: me, targetApplicationId: G, appKey: G, createdAt: 1, visibility: 'open', joinedAt: 1 });
  const ns = {
    id: G,
    groups: { [G]: group },
    deviceBindings: {
      [me]: { d1: { signingKey: device.publicKey, linkedAt: 1 }, d2: { signingKey: revoked.publicKey, linkedAt: 1, revokedAt: 2 } },
      ['b'.repeat(64)]: { d3: { signingKey: other.publicKey, linkedAt: 1 } },
    },
  } as unknown as NamespaceState;
  const governance = {
    requireGroup: (id: string) => {
      if (id !== G) throw new HearthError('not_found', 'group not found');
      return { ns, group };
    },
  } as unknown as Governance;
  return { service: new SigningKeyService({ store, governance, identity, clock: { now: () => 9 } }), device };
}

const kind = (p: Promise<unknown>) => p.then(() => 'ok', (e: HearthError) => e.kind);

describe('group signing keys', () => {
  it('parses 64 hex, or 128 hex whose second half is the public key, and never echoes the secret', () => {
    const k = keyFromSeed(Buffer.from(seedHex(5), 'hex'));
    expect(parseSigningSecret(seedHex(5)).publicKey).toBe(k.publicKey);
    expect(parseSigningSecret(seedHex(5) + k.publicKey).publicKey).toBe(k.publicKey);
    expect(() => parseSigningSecret(seedHex(5) + 'ff'.repeat(32))).toThrow(/second half/);
    for (const bad of [undefined, '', 'zz'.repeat(32), seedHex(5).slice(2)]) {
      try {
        parseSigningSecret(bad);
        throw new Error('accepted');
      } catch (e) {
        expect((e as HearthError).kind).toBe('bad_request');
        if (bad) expect((e as Error).message).not.toContain(bad);
      }
    }
  });

  it("registers a device key bound to the node's account and refuses revoked, foreign and unknown keys", async () => {
    const { service, device } = await setup();
    expect(await service.register(G, seedHex(5))).toEqual({ publicKey: device.publicKey });
    expect(await service.registered(G)).toEqual([device.publicKey]);
    expect(await kind(service.register(G, seedHex(6)))).toBe('forbidden');
    expect(await kind(service.register(G, seedHex(7)))).toBe('forbidden');
    expect(await kind(service.register(G, seedHex(8)))).toBe('forbidden');
    expect(await kind(service.register('c'.repeat(64), seedHex(5)))).toBe('not_found');
    expect(await service.registered(G)).toEqual([device.publicKey]);
  });
});
