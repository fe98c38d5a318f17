/**
 * One member poisoning a context (issue #37 item 6), over the in-memory network: M, a member node,
 * publishes properly signed and sealed deltas naming parents that exist nowhere, and deltas whose
 * payload the application refuses. Every honest node holds a bounded number of M's deltas, drops
 * them once their parents were asked for and never came (the status says so and the context is
 * caught up again), penalises M until it is banned, and holds none of M's orphans for a while even
 * when another peer relays them; M's refused payloads penalise it too.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { deltaIdOf } from '../contexts/executor.ts';
import { APP_ID } from '../contexts/testkit.ts';
import { UNINITIALIZED_HASH } from '../contexts/types.ts';
import { contextTopic } from '../network/topic-names.ts';
import { MemoryHub } from '../network/memory.ts';
import { encodeJson } from '../network/router.ts';
import { seal } from './keys.ts';
import { PendingDeltas } from './pending.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';
import { deltaDigest } from './wire.ts';

const running: SyncNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
});

const PER_ORIGIN = 50;
const TIMEOUT_MS = 60_000;

async function call(n: SyncNode, contextId: string, method: string, args: Record<string, string> = {}, readOnly = false) {
  const { result } = await n.executor.call(
    contextId,
    { method, input: new TextEncoder().encode(JSON.stringify(args)), executorId: n.identity.accountId, deviceId: n.identity.publicKey, readOnly },
    () => undefined,
  );
  if (!result.ok) throw new Error(result.message);
  return result.output ? JSON.parse(new TextDecoder().decode(result.output)) : null;
}

/** A founds a namespace and a context; B and M join it (all linked). */
async function cluster() {
  const hub = new MemoryHub();
  const nodes: SyncNode[] = [];
  for (let i = 0; i < 3; i++) {
    const n = await syncNode(hub, 1_700_000_000_000 + i * 100_000, undefined, undefined, undefined, { pending: { perOrigin: PER_ORIGIN, parentTimeoutMs: TIMEOUT_MS } });
    running.push(n);
    nodes.push(n);
  }
  const [a, b, m] = nodes as [SyncNode, SyncNode, SyncNode];
  const ns = await a.namespaces.found({ applicationId: APP_ID });
  const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
  await call(a, contextId, 'set', { key: 'seed', value: 'a' });
  for (const n of [b, m]) {
    const { invitation } = await a.invitations.invite(ns.id, {});
    await n.invitations.join(JSON.parse(JSON.stringify(invitation)), ns.id);
    await until('the context is registered on the joiner', () => n.contexts.registration(contextId) !== undefined);
    await until('A knows the joiner', () => a.governance.namespace(ns.id)?.groups[ns.id]?.members[n.identity.accountId] !== undefined);
    await n.contexts.join(contextId);
    await until('the joiner has the state', async () => (await n.records.getMeta(contextId))?.rootHash !== UNINITIALIZED_HASH);
  }
  // M writes once honestly: it holds the group key, as any member does
  await call(m, contextId, 'set', { key: 'from-m', value: 'm' });
  await until('B has M’s honest write', async () => (await call(b, contextId, 'get', { key: 'from-m' }, true)) === 'm');
  return { hub, a, b, m, groupId: ns.id, contextId };
}

/** What a patched M publishes: a delta it signs and seals with the group's key, over `parents`. */
async function hostile(m: SyncNode, groupId: string, contextId: string, parents: string[], key = `x${randomBytes(4).toString('hex')}`) {
  const { keyId, key: groupKey } = await m.keys.current(groupId);
  const artifact = Buffer.from(JSON.stringify({ ops: [{ key, value: 'poison', stamp: [1, 'zz'] }] }));
  const head = { contextId, id: deltaIdOf(parents, artifact), parents, origin: m.identity.publicKey, author: m.identity.publicKey, hlc: m.sync.hlc.tick() };
  const body = { artifact: artifact.toString('hex'), rootHash: 'ef'.repeat(32), timestampMs: Date.now() };
  return encodeJson({ type: 'delta', ...head, signature: m.identity.sign(deltaDigest(head)), keyId, ...seal(groupKey, Buffer.from(JSON.stringify(body))) });
}

const randomParents = () => [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];

describe('a member publishing deltas whose parents exist nowhere (issue #37 item 6)', () => {
  it('holds a bounded number of them, expires them after asking, is caught up again, and penalises their origin', async () => {
    const { hub, a, b, m, groupId, contextId } = await cluster();
    const topic = contextTopic(contextId);
    const flood = 3 * PER_ORIGIN;
    for (let i = 0; i < flood; i++) await m.net.publish(topic, await hostile(m, groupId, contextId, randomParents()));
    await until('B holds M’s orphans', async () => (await b.sync.view(contextId)).pending >= PER_ORIGIN);
    await new Promise((r) => setTimeout(r, 500)); // the rest of the flood lands
    const held = await b.sync.view(contextId);
    expect(held.pending).toBe(PER_ORIGIN);
    expect(held.caughtUp).toBe(false);
    expect(held.reasons.map((r) => r.reason)).toContain('parents_pending');
    // within the timeout nothing is dropped, and nobody is penalised for it
    expect(b.net.penalties.filter((p) => p.peer === m.identity.publicKey)).toEqual([]);
    // the context still serves reads and takes local writes meanwhile
    await call(b, contextId, 'set', { key: 'local', value: 'fine' });
    expect(await call(b, contextId, 'get', { key: 'local' }, true)).toBe('fine');

    // past the timeout, the next round of asking drops them and says so
    b.advanceClock(TIMEOUT_MS + 1_000);
    await until('B dropped M’s orphans', async () => (await b.sync.view(contextId)).pending === 0);
    await until('B is caught up again', async () => (await b.sync.view(contextId)).caughtUp, 5_000);
    const after = await b.sync.view(contextId);
    const expired = after.reasons.find((r) => r.reason === 'parents_expired');
    expect(expired?.detail).toMatch(new RegExp(`^${PER_ORIGIN} held delta\\(s\\) dropped since start.*${m.identity.publicKey.slice(0, 12)}`));
    // one penalty per dropped delta: M is banned (20 within a minute) and cut off from B
    const penalties = b.net.penalties.filter((p) => p.peer === m.identity.publicKey);
    expect(penalties.length).toBe(PER_ORIGIN);
    expect(penalties.every((p) => p.reason === 'invalid_message' && /parents never arrived/.test(p.detail ?? ''))).toBe(true);
    expect(b.net.status().banned.map((x) => x.peer)).toContain(m.identity.publicKey);
    expect(b.net.peers()).not.toContain(m.identity.publicKey);

    // M's orphans relayed by another peer (a non-member relaying gossip) are not held at all now
    const x = hub.join('ee'.repeat(32));
    x.subscribe(topic, () => undefined);
    hub.link(x.self, m.identity.publicKey);
    hub.link(x.self, b.identity.publicKey);
    hub.unlink(a.identity.publicKey, m.identity.publicKey);
    let relayed = 0;
    const deliver = b.net.deliver.bind(b.net);
    b.net.deliver = (msg) => {
      if (msg.from === m.identity.publicKey && msg.via === x.self) relayed++;
      deliver(msg);
    };
    for (let i = 0; i < 10; i++) await m.net.publish(topic, await hostile(m, groupId, contextId, randomParents()));
    await until('B got the relayed orphans', () => relayed >= 10);
    await new Promise((r) => setTimeout(r, 300));
    expect((await b.sync.view(contextId)).pending).toBe(0);
    // an honest member's writes still flow
    await call(a, contextId, 'set', { key: 'after', value: 'honest' });
    await until('B has A’s write', async () => (await call(b, contextId, 'get', { key: 'after' }, true)) === 'honest');
    expect((await b.sync.view(contextId)).caughtUp).toBe(true);
  });

  it('a payload the application refuses is quarantined and penalises its origin', async () => {
    const { b, m, groupId, contextId } = await cluster();
    const heads = (await b.records.getMeta(contextId))!.dagHeads;
    await m.net.publish(contextTopic(contextId), await hostile(m, groupId, contextId, heads, '__trap'));
    await until('quarantined on B', async () => (await b.sync.view(contextId)).quarantined === 1);
    const penalties = b.net.penalties.filter((p) => p.peer === m.identity.publicKey);
    expect(penalties).toHaveLength(1);
    expect(penalties[0]).toMatchObject({ reason: 'invalid_message', detail: expect.stringMatching(/the application refuses it \(Panic\)/) });
  });
});

describe('PendingDeltas', () => {
  let t = 0;
  const delta = (origin: string, id: string, parents: string[]) => ({ contextId: 'c', id, parents, origin, author: origin, artifact: '', rootHash: '', timestampMs: 0 });

  it('bounds one origin, evicts the largest origin’s oldest at the context bound, and expires chains', () => {
    const p = new PendingDeltas({ perContext: 6, perOrigin: 4, parentTimeoutMs: 10, suspectMs: 100 }, () => t);
    t = 0;
    expect(p.hold(delta('h', 'h1', ['zz']))).toBe('held');
    for (let i = 0; i < 4; i++) expect(p.hold(delta('m', `m${i}`, [`r${i}`]))).toBe('held');
    // M at its own bound: refused; the honest origin still holds
    expect(p.hold(delta('m', 'm4', ['r4']))).toBe('origin_full');
    expect(p.hold(delta('h', 'h2', ['h1']))).toBe('held');
    // the context is full: the next one evicts M's oldest, never H's
    t = 5;
    expect(p.hold(delta('h', 'h3', ['h2']))).toBe('held');
    expect(p.has('c', 'm0')).toBe(false);
    expect(p.has('c', 'h1')).toBe(true);
    expect(p.count('c')).toBe(6);
    // expiry at 3: H’s chain goes with h1 (held at 0, h3 at 5 with it), and M’s deltas held at 0
    const gone = p.expire('c', 3).map((h) => h.delta.id).sort();
    expect(gone).toEqual(['h1', 'h2', 'h3', 'm1', 'm2', 'm3']);
    expect(p.count('c')).toBe(0);
    // both origins are suspect for suspectMs: they hold nothing
    expect(p.hold(delta('m', 'm9', ['r9']))).toBe('suspect');
    t = 200;
    expect(p.suspected('m')).toBe(false);
    expect(p.hold(delta('m', 'm9', ['r9']))).toBe('held');
  });
});
