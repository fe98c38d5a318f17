/**
 * Migration heartbeats: what a beat from a peer must hold, how long the cache keeps it and which it
 * drops (stamped too far ahead, older than the device's last), and that only a key speaking for a
 * member account of the namespace is heard.
 */
import { describe, expect, it } from 'vitest';
import { namespaceIdOf } from '../crypto/ids.ts';
import { emptyNamespace } from '../governance/genesis.ts';
import { opApplier } from '../governance/testkit.ts';
import type { GroupUpgradeRecord } from './types.ts';
import { HEARTBEAT_TTL_MS, HeartbeatCache, MAX_DRIFT_MS, MigrationHeartbeats, parseBeat, type HeartbeatDeps, type MigrationBeat } from './heartbeats.ts';

const OWNER = 'b2'.repeat(32);
const MEMBER = 'a1'.repeat(32);
const NS = namespaceIdOf(OWNER, '11'.repeat(32));
const UPG = '22'.repeat(32);
const PEER = 'aa'.repeat(32);
const beat = (tsMs: number, extra: Partial<MigrationBeat> = {}): MigrationBeat => ({ namespaceId: NS, upgradeId: UPG, schemaVersion: 1, residueAuto: 0, syncedUpToHlc: 1, tsMs, ...extra });

describe('parseBeat', () => {
  it('takes a well-formed beat and refuses what is not', () => {
    expect(parseBeat({ type: 'migration', ...beat(5, { migrationFailed: 'apply_failed' }) })).toEqual(beat(5, { migrationFailed: 'apply_failed' }));
    expect(parseBeat({ ...beat(5), namespaceId: 'x' })).toMatch(/namespace/);
    expect(parseBeat({ ...beat(5), residueAuto: -1 })).toMatch(/residueAuto/);
    expect(parseBeat({ ...beat(5), schemaVersion: 2 ** 32 })).toMatch(/u32/);
    expect(parseBeat({ ...beat(5), migrationFailed: 'oops' })).toMatch(/migrationFailed/);
  });
});

describe('HeartbeatCache', () => {
  it('keeps the newest beat of a device for the TTL, dropping older and far-future ones', () => {
    let now = 1_000_000;
    const cache = new HeartbeatCache({ now: () => now });
    expect(cache.insert(PEER, beat(now))).toBe(true);
    expect(cache.insert(PEER, beat(now - 1))).toBe(false); // re-delivered late
    expect(cache.insert(PEER, beat(now + MAX_DRIFT_MS + 1))).toBe(false); // a clock far ahead
    expect(cache.insert(PEER, beat(now + 10, { residueAuto: 3 }))).toBe(true);
    expect(cache.fresh(NS, PEER)?.residueAuto).toBe(3);
    expect(cache.fresh('33'.repeat(32), PEER)).toBeUndefined();
    now += HEARTBEAT_TTL_MS + 1;
    expect(cache.fresh(NS, PEER)).toBeUndefined();
  });
});

describe('MigrationHeartbeats', () => {
  it('hears members only, penalizes malformed beats, and publishes its own facts when a peer listens', async () => {
    const g = { salt: '11'.repeat(32), applicationId: 'ef'.repeat(32), appKey: '01'.repeat(32) };
    const at = { account: OWNER, signer: 'bb'.repeat(32) };
    const applyOp = opApplier();
    let ns = applyOp(emptyNamespace(NS, OWNER, g, 1), NS, 'namespace.created', g, at);
    ns = applyOp(ns, NS, 'group.member_added', { members: [{ account: MEMBER, role: 'Member' }] }, at);
    ns.groups[NS]!.upgrade = { id: UPG, toStateVersion: 1, initiatedAt: 1, fence: '1' } as GroupUpgradeRecord;
    ns.signers = { [PEER]: { account: MEMBER, deviceId: 'd' } };
    let handler: ((nsId: string, m: Record<string, unknown>, from: string) => void) | undefined;
    const published: unknown[] = [];
    const penalties: string[] = [];
    const deps = {
      network: { topicPeers: () => [PEER], publish: async (_t: string, data: Uint8Array) => published.push(JSON.parse(new TextDecoder().decode(data))), penalize: (_p: string, reason: string) => penalties.push(reason) },
      topics: { onTopicMessage: (_type: string, h: typeof handler) => ((handler = h), () => undefined) },
      governance: { namespace: (id: string) => (id === NS ? ns : undefined), namespaces: () => [ns] },
      identity: { accountId: OWNER, publicKey: 'bb'.repeat(32) },
      bus: { subscribe: () => () => undefined },
      clock: { now: () => 5_000 },
      progress: { counts: async () => ({ contexts: ['c1', 'c2'], swapped: ['c1'], failed: new Map() }) },
      onError: (e: unknown) => {
        throw e;
      },
    } as unknown as HeartbeatDeps;
    const hb = new MigrationHeartbeats(deps);
    hb.start();
    try {
      handler!(NS, { type: 'migration', ...beat(4_000) }, PEER);
      expect(hb.cache.fresh(NS, PEER)).toMatchObject({ upgradeId: UPG });
      handler!(NS, { type: 'migration', ...beat(4_000) }, 'cc'.repeat(32)); // a key that speaks for no member
      expect(hb.cache.fresh(NS, 'cc'.repeat(32))).toBeUndefined();
      handler!(NS, { type: 'migration', ...beat(4_001), namespaceId: '33'.repeat(32) }, PEER);
      handler!(NS, { type: 'migration', tsMs: 'soon' }, PEER);
      expect(penalties).toEqual(['invalid_message', 'invalid_message']);

      await hb.tick();
      expect(published).toEqual([{ type: 'migration', namespaceId: NS, upgradeId: UPG, schemaVersion: 1, residueAuto: 1, syncedUpToHlc: 5, tsMs: 5_000 }]);
      await hb.beat(NS, false); // nothing changed since: no beat
      expect(published).toHaveLength(1);
    } finally {
      hb.stop();
    }
  });
});
