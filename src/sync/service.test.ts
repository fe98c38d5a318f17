/**
 * Context state sync over the in-memory network: a joiner gets the state (snapshot), writes on one
 * node reach the others with their events, concurrent writes converge to one root, a node that was
 * away or restarted catches up, hostile deltas are refused with a reason and a penalty, a guest that
 * traps while merging quarantines the delta, and a removed member cannot read later writes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APP_ID } from '../contexts/testkit.ts';
import { UNINITIALIZED_HASH } from '../contexts/types.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../crypto/keys.ts';
import { contextTopic } from '../network/topic-names.ts';
import { MemoryHub } from '../network/memory.ts';
import { encodeJson, SYNC_PROTOCOL } from '../network/router.ts';
import { UPGRADE_OPS } from '../upgrades/types.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';
import { deltaDigest, KINDS } from './wire.ts';

const running: SyncNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
});

async function node(hub: MemoryHub, startMs: number, existing?: SyncNode): Promise<SyncNode> {
  const n = await syncNode(hub, startMs, existing ? { store: existing.store, identity: existing.identity } : undefined);
  running.push(n);
  return n;
}

let injected = 0;
/** A message B's network takes as published by `from` and relayed by `via` (a member's node gone rogue, in memory). */
const inject = (to: SyncNode, via: string, from: string, topic: string, data: Uint8Array) => to.net.deliver({ id: `${from}/injected-${++injected}`, topic, from, via, data });

const dec = (b: Uint8Array | null) => (b ? JSON.parse(new TextDecoder().decode(b)) : null);

async function call(n: SyncNode, contextId: string, method: string, args: Record<string, string> = {}, readOnly = false) {
  const { result } = await n.executor.call(
    contextId,
    { method, input: new TextEncoder().encode(JSON.stringify(args)), executorId: n.identity.accountId, deviceId: n.identity.publicKey, readOnly },
    () => undefined,
  );
  if (!result.ok) throw new Error(result.message);
  return dec(result.output);
}

const meta = async (n: SyncNode, id: string) => (await n.records.getMeta(id))!;
const sameState = async (nodes: SyncNode[], id: string) => {
  const metas = await Promise.all(nodes.map((n) => n.records.getMeta(id)));
  return metas.every((m) => m && m.rootHash !== UNINITIALIZED_HASH && m.rootHash === metas[0]!.rootHash && JSON.stringify(m.dagHeads) === JSON.stringify(metas[0]!.dagHeads));
};

/** A founds a namespace with a context; every other node joins the namespace and the context. */
async function cluster(count: number) {
  const hub = new MemoryHub();
  const nodes: SyncNode[] = [];
  for (let i = 0; i < count; i++) nodes.push(await node(hub, 1_700_000_000_000 + i * 100_000));
  const [a] = nodes as [SyncNode];
  const ns = await a.namespaces.found({ applicationId: APP_ID });
  const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
  await call(a, contextId, 'set', { key: 'seed', value: 'a' });
  for (const n of nodes.slice(1)) {
    const { invitation } = await a.invitations.invite(ns.id, {});
    await n.invitations.join(JSON.parse(JSON.stringify(invitation)), ns.id);
    await until('the context is registered on the joiner', () => n.contexts.registration(contextId) !== undefined);
    await n.contexts.join(contextId);
  }
  for (const n of nodes.slice(1)) await until('the joiner has the state', () => sameState([a, n], contextId));
  return { hub, nodes, nsId: ns.id, contextId };
}

describe('context sync', () => {
  it('a joiner receives the state (snapshot), then writes flow both ways with their events', async () => {
    const { nodes, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    expect(await call(b, contextId, 'get', { key: 'seed' }, true)).toBe('a');
    expect((await b.sync.view(contextId)).caughtUp).toBe(true);
    await call(a, contextId, 'set', { key: 'k1', value: 'from-a' });
    await until('B sees A’s write', async () => (await call(b, contextId, 'get', { key: 'k1' }, true)) === 'from-a');
    const mutation = b.events.find((e) => e.type === 'context' && e.kind === 'StateMutation' && JSON.stringify(e.data).includes('"Inserted"'));
    expect(mutation).toBeDefined();
    await call(b, contextId, 'set', { key: 'k2', value: 'from-b' });
    await until('A sees B’s write', async () => (await call(a, contextId, 'get', { key: 'k2' }, true)) === 'from-b');
    await until('same root and heads', () => sameState(nodes, contextId));
  });

  it('concurrent writes on three nodes converge to one root, and the next write merges the heads', async () => {
    const { hub, nodes, contextId } = await cluster(3);
    const [a, b, c] = nodes as [SyncNode, SyncNode, SyncNode];
    const keysOf = nodes.map((n) => n.identity.publicKey);
    for (const x of keysOf) for (const y of keysOf) if (x < y) hub.unlink(x, y);
    await call(a, contextId, 'set', { key: 'same', value: 'a' });
    await call(b, contextId, 'set', { key: 'same', value: 'b' });
    await call(c, contextId, 'set', { key: 'c-only', value: 'c' });
    await call(a, contextId, 'remove', { key: 'seed' });
    hub.linkAll();
    await until('all converge', () => sameState(nodes, contextId), 10_000);
    const entries = await Promise.all(nodes.map((n) => call(n, contextId, 'entries', {}, true)));
    expect(entries[1]).toEqual(entries[0]);
    expect(entries[2]).toEqual(entries[0]);
    expect(entries[0]).toMatchObject({ 'c-only': 'c' });
    expect(entries[0].seed).toBeUndefined();
    expect((await meta(a, contextId)).dagHeads.length).toBe(3);
    await call(b, contextId, 'set', { key: 'after', value: 'merge' });
    await until('one head everywhere', async () => (await sameState(nodes, contextId)) && (await meta(a, contextId)).dagHeads.length === 1);
  });

  it('gossip lost for good between two connected nodes: the periodic heads check still converges them', async () => {
    // the NAT lab's case (docs/sync.md): the gossip streams died with a relayed connection DCUtR
    // replaced, the peers stay connected, so no connection event comes and no heartbeat arrives
    const { nodes, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    for (const n of [a, b]) n.net.publish = async () => 0; // every delta and heads heartbeat lost
    await call(a, contextId, 'set', { key: 'lost-a', value: 'a' });
    await call(b, contextId, 'set', { key: 'lost-b', value: 'b' });
    await until('both writes on both nodes', async () => (await call(a, contextId, 'get', { key: 'lost-b' }, true)) === 'b' && (await call(b, contextId, 'get', { key: 'lost-a' }, true)) === 'a');
    await until('same root and heads', () => sameState(nodes, contextId));
  });

  it('runs at most 30 periodic heads checks at once, however many contexts wait on a silent member', async () => {
    const { nodes, nsId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    for (let i = 0; i < 34; i++) {
      const { contextId } = await a.contexts.create({ groupId: nsId, applicationId: APP_ID, initializationParams: new Uint8Array() });
      await until('the context is registered on B', () => b.contexts.registration(contextId) !== undefined);
      await b.contexts.join(contextId);
      await until('B has the state', () => sameState([a, b], contextId));
    }
    // A stops answering heads requests: each of B's checks waits for its deadline
    let inFlight = 0;
    let most = 0;
    const request = b.net.request.bind(b.net);
    b.net.request = async (peer, protocol, data, opts) => {
      if ((JSON.parse(new TextDecoder().decode(data)) as { type?: string }).type !== KINDS.heads) return request(peer, protocol, data, opts);
      most = Math.max(most, ++inFlight);
      try {
        return await new Promise<Uint8Array>((_, reject) => setTimeout(() => reject(new Error('timed out')), opts.timeoutMs));
      } finally {
        inFlight--;
      }
    };
    await until('B asks for heads on every heartbeat', () => most >= 30);
    await new Promise((r) => setTimeout(r, 400)); // several more heartbeats (60 ms each) of 35 contexts
    expect(most).toBe(30);
  });

  it('a node away (partitioned, then restarted) catches up with every write it missed', async () => {
    const { hub, nodes, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    hub.unlink(a.identity.publicKey, b.identity.publicKey);
    for (let i = 0; i < 20; i++) await call(a, contextId, 'set', { key: `k${i}`, value: String(i) });
    expect(await call(b, contextId, 'get', { key: 'k19' }, true)).toBeNull();
    await b.stop();
    running.splice(running.indexOf(b), 1);
    const b2 = await node(hub, 1_800_000_000_000, b);
    hub.link(b2.identity.publicKey, a.identity.publicKey);
    await until('B caught up', () => sameState([a, b2], contextId));
    expect(await call(b2, contextId, 'get', { key: 'k19' }, true)).toBe('19');
    expect((await b2.sync.view(contextId)).behind).toBe(0);
  });

  it('a node far behind takes a snapshot when it holds nothing the others lack, and replays deltas when it does', async () => {
    const { hub, nodes, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    // 1. B behind by 30 (above the bound of 10), nothing of its own: one snapshot, whose deltas'
    //    events B's subscribers still get, in the order the writes were made
    hub.unlink(a.identity.publicKey, b.identity.publicKey);
    for (let i = 0; i < 30; i++) await call(a, contextId, 'set', { key: `far${i}`, value: String(i) });
    const before = b.events.length;
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await until('B caught up by snapshot', () => sameState([a, b], contextId));
    const replayed = () => b.events.slice(before).filter((e) => e.type === 'context' && e.kind === 'StateMutation') as unknown as { data: { newRoot: string; events: { data: number[] }[] } }[];
    await until('B announced the missed events', () => replayed().length >= 30);
    const keys = replayed().flatMap((e) => e.data.events.map((ev) => /far\d+/.exec(new TextDecoder().decode(Uint8Array.from(ev.data)))?.[0]));
    expect(keys).toEqual(Array.from({ length: 30 }, (_, i) => `far${i}`));
    // one root for all of them, the snapshot's: a replay one by one would name 30 roots
    expect(new Set(replayed().map((e) => e.data.newRoot))).toEqual(new Set([(await meta(b, contextId)).rootHash]));
    expect(await call(b, contextId, 'get', { key: 'far29' }, true)).toBe('29');
    // 2. B behind by 30 again but with a write of its own: the deltas are replayed, nothing is lost
    hub.unlink(a.identity.publicKey, b.identity.publicKey);
    for (let i = 0; i < 30; i++) await call(a, contextId, 'set', { key: `again${i}`, value: String(i) });
    await call(b, contextId, 'set', { key: 'mine', value: 'kept' });
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await until('both converge', () => sameState([a, b], contextId), 10_000);
    expect(await call(a, contextId, 'get', { key: 'mine' }, true)).toBe('kept');
    expect(await call(b, contextId, 'get', { key: 'again29' }, true)).toBe('29');
  });

  it('refuses forged and non-member deltas with a penalty, and quarantines one the guest cannot merge', async () => {
    const { hub, nodes, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    const x = hub.join('ee'.repeat(32));
    hub.link(x.self, b.identity.publicKey);
    x.subscribe(contextTopic(contextId), () => undefined);
    const head = { contextId, id: 'ab'.repeat(32), parents: (await meta(b, contextId)).dagHeads, origin: a.identity.publicKey, author: a.identity.publicKey, hlc: '1.000000' };
    const stranger = generateKeyPair('ed25519');
    const forgedSig = ed25519Sign(privateKeyObject(stranger.privateKey), deltaDigest(head));
    // a non-member publishing on the topic is refused before anything reads it (issue #37 item 7)
    await x.publish(contextTopic(contextId), new TextEncoder().encode('garbage from a non-member'));
    await until('X refused at the door', () => b.net.penalties.some((p) => p.peer === x.self));
    expect(b.net.penalties.filter((p) => p.peer === x.self).map((p) => p.reason)).toEqual(['unauthorized']);
    // what a member's node publishes is read, and refused when forged (X relays it here)
    const topic = contextTopic(contextId);
    const from = a.identity.publicKey;
    inject(b, x.self, from, topic, encodeJson({ type: 'delta', ...head, signature: forgedSig, keyId: 'cd'.repeat(32), nonce: '00'.repeat(12), ciphertext: '00'.repeat(32) }));
    const own = { ...head, origin: stranger.publicKey };
    inject(b, x.self, from, topic, encodeJson({ type: 'delta', ...own, signature: ed25519Sign(privateKeyObject(stranger.privateKey), deltaDigest(own)), keyId: 'cd'.repeat(32), nonce: '00'.repeat(12), ciphertext: '00'.repeat(32) }));
    inject(b, x.self, from, topic, new TextEncoder().encode('garbage'));
    await until('three penalties', () => b.net.penalties.filter((p) => p.peer === from).length >= 3);
    expect(b.net.penalties.filter((p) => p.peer === from).map((p) => p.reason).sort()).toEqual(['bad_signature', 'invalid_message', 'unauthorized']);

    await call(a, contextId, 'set', { key: '__trap', value: 'boom' });
    await until('quarantined on B', async () => (await b.sync.view(contextId)).quarantined === 1);
    const status = await b.sync.view(contextId);
    expect(status.reasons.map((r) => r.reason)).toContain('apply_failed');
    // B still serves reads and takes local writes
    expect(await call(b, contextId, 'get', { key: 'seed' }, true)).toBe('a');
    await call(b, contextId, 'set', { key: 'still', value: 'works' });
    expect(await call(b, contextId, 'get', { key: 'still' }, true)).toBe('works');
  });

  it('never pulls from a non-member that republishes a member’s delta, nor counts it as a peer heard from', async () => {
    const { hub, nodes, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    const topic = contextTopic(contextId);
    // X: not a member; it sees A's sealed gossip and answers any sync request it gets
    const x = hub.join('ef'.repeat(32));
    let asked = 0;
    x.handle(SYNC_PROTOCOL, async () => {
      asked++;
      return encodeJson({ part: 'boundary', rootHash: '00'.repeat(32), heads: [] });
    }, { maxRequestBytes: 1 << 16, timeoutMs: 5_000 });
    const seen: Uint8Array[] = [];
    x.subscribe(topic, (m) => {
      if ((JSON.parse(new TextDecoder().decode(m.data)) as { type?: string }).type === 'delta') seen.push(m.data);
    });
    // B has the group key already (a write while linked): what it lacks later is only a parent
    await call(a, contextId, 'set', { key: 'zero', value: '0' });
    await until('B has the first write', async () => (await call(b, contextId, 'get', { key: 'zero' }, true)) === '0');
    hub.link(x.self, a.identity.publicKey);
    hub.unlink(a.identity.publicKey, b.identity.publicKey);
    await call(a, contextId, 'set', { key: 'first', value: '1' });
    await call(a, contextId, 'set', { key: 'second', value: '2' });
    await until('X saw both deltas', () => seen.length >= 2);
    // B hears only X, which hands it the second delta: its parent is missing
    hub.unlink(x.self, a.identity.publicKey);
    hub.link(x.self, b.identity.publicKey);
    await until('B hears X on the topic', () => b.net.topicPeers(topic).includes(x.self) && x.topicPeers(topic).includes(b.identity.publicKey));
    await x.publish(topic, seen[1]!);
    // refused at the door: X is no member (issue #37 item 7), so it is neither held nor forwarded
    await until('B refused X’s republication', () => b.net.penalties.some((p) => p.peer === x.self && p.reason === 'unauthorized'));
    await new Promise((r) => setTimeout(r, 300));
    expect((await b.sync.view(contextId)).pending).toBe(0);
    expect(asked).toBe(0);
    expect((await b.sync.view(contextId)).peers.map((p) => p.peer)).not.toContain(x.self);
    // a member brings the parent, and both apply
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await until('B converges with A', () => sameState([a, b], contextId));
    expect(asked).toBe(0);
  });

  it('a bad seal, an oversized artifact and parents that never arrive show in the status, and nothing breaks', async () => {
    const { hub, nodes, nsId, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    // A's own key signs, so only the body is wrong: a seal that does not open
    const signed = (over: Record<string, unknown>) => {
      const head = { contextId, id: 'ab'.repeat(32), parents: ['cd'.repeat(32)], origin: a.identity.publicKey, author: a.identity.publicKey, hlc: '5.000000', ...over };
      return { type: 'delta', ...head, signature: a.identity.sign(deltaDigest(head as never)) };
    };
    const keyId = a.governance.namespace(nsId)!.groups[nsId]!.keyId!;
    const relay = hub.join('ee'.repeat(32));
    hub.link(relay.self, b.identity.publicKey);
    relay.subscribe(contextTopic(contextId), () => undefined);
    inject(b, relay.self, a.identity.publicKey, contextTopic(contextId), encodeJson({ ...signed({}), keyId, nonce: '00'.repeat(12), ciphertext: '11'.repeat(48) }));
    await until('the bad seal is reported', async () => (await b.sync.view(contextId)).reasons.some((r) => r.reason === 'decrypt_failed'));
    // an artifact past the bound is refused before anything reads it
    const { deltaFrames, parseRecord } = await import('./wire.ts');
    const huge = { ...signed({}), artifact: '00'.repeat(3 * 1024 * 1024 + 1), rootHash: 'ef'.repeat(32), timestampMs: 1 };
    expect(parseRecord(huge)).toMatch(/artifact must be hex of at most/);
    expect([...deltaFrames(contextId, [])]).toEqual([]);
    // a valid delta whose parent nobody has: held, counted, and B still works
    const { deltaIdOf } = await import('../contexts/executor.ts');
    const artifact = Buffer.from(JSON.stringify({ ops: [{ key: 'orphan', value: 'x', stamp: [99, 'zz'] }] })).toString('hex');
    const parents = ['77'.repeat(32)];
    const id = deltaIdOf(parents, Buffer.from(artifact, 'hex'));
    const head = { contextId, id, parents, origin: a.identity.publicKey, author: a.identity.publicKey, hlc: '6.000000' };
    const record = { ...head, signature: a.identity.sign(deltaDigest(head)), artifact, rootHash: 'ef'.repeat(32), timestampMs: 1 };
    expect(await b.sync.applier.receive(parseRecord(record) as never, relay.self)).toBe('pending');
    const status = await b.sync.view(contextId);
    expect(status).toMatchObject({ pending: 1, caughtUp: false });
    expect(status.reasons.map((r) => r.reason)).toContain('parents_pending');
    expect(await b.sync.applier.wanted(contextId)).toEqual(parents);
    await call(b, contextId, 'set', { key: 'local', value: 'fine' });
    expect(await call(b, contextId, 'get', { key: 'local' }, true)).toBe('fine');
    expect(await call(b, contextId, 'get', { key: 'orphan' }, true)).toBeNull();
  });

  it('a member removed by an admin cannot read later writes', async () => {
    const { nodes, nsId, contextId } = await cluster(3);
    const [a, b, c] = nodes as [SyncNode, SyncNode, SyncNode];
    const keyBefore = a.governance.namespace(nsId)!.groups[nsId]!.keyId;
    expect(keyBefore).toBeDefined();
    await a.members.removeMembers(nsId, [c.identity.accountId]);
    await until('C knows it was removed', () => !c.governance.namespace(nsId)?.groups[nsId]?.members[c.identity.accountId]);
    await until('A rotated the key', () => a.governance.namespace(nsId)!.groups[nsId]!.keyId !== keyBefore);
    await call(a, contextId, 'set', { key: 'secret', value: 'after-removal' });
    await until('B reads it', async () => (await call(b, contextId, 'get', { key: 'secret' }, true)) === 'after-removal');
    await new Promise((r) => setTimeout(r, 300));
    expect(await call(c, contextId, 'get', { key: 'secret' }, true)).toBeNull();
    c.sync.syncNow(contextId);
    await new Promise((r) => setTimeout(r, 300));
    expect(await call(c, contextId, 'get', { key: 'secret' }, true)).toBeNull();
  });

  it('defers remote deltas while the context’s upgrade is pending on this node, and merges them once it migrated', async () => {
    const { nodes, nsId, contextId } = await cluster(2);
    const [a, b] = nodes as [SyncNode, SyncNode];
    const V2 = '02'.repeat(32);
    /** what src/upgrades/migrator.ts does to a context, minus running a migration entry */
    const migrate = async (n: SyncNode) => {
      await n.executor.locks.run(contextId, true, async () => n.records.meta.put(contextId, { ...(await meta(n, contextId)), bundleBlobId: V2 }));
      n.bus.publish({ type: 'context', contextId, kind: 'AppVersionChanged', data: { toVersion: '2.0.0' } });
    };
    const body = { groupIds: [nsId], targetApplicationId: APP_ID, fromVersion: '1.0.0', toVersion: '2.0.0', fromAppKey: '01'.repeat(32), toAppKey: V2, toStateVersion: 0, cascade: false };
    await a.governance.submit(nsId, nsId, UPGRADE_OPS.set, body);
    await until('B applied the upgrade op', () => b.governance.namespace(nsId)?.groups[nsId]?.upgrade?.toAppKey === V2);
    await migrate(a); // A runs the new version; B has not migrated yet
    await call(a, contextId, 'set', { key: 'after', value: 'new-code' });
    await until('B defers it and says why', async () => (await b.sync.view(contextId)).reasons.some((r) => r.reason === 'upgrade_pending'));
    // B's own writes still go out, and A merges them
    await call(b, contextId, 'set', { key: 'fromB', value: 'old-code' });
    await until('A merges B’s write', async () => (await call(a, contextId, 'get', { key: 'fromB' }, true)) === 'old-code');
    await new Promise((r) => setTimeout(r, 300)); // several heartbeats and pulls: the deferral holds
    expect(await call(b, contextId, 'get', { key: 'after' }, true)).toBeNull();
    expect((await b.sync.view(contextId)).caughtUp).toBe(false);

    // nor does B hand out a snapshot of the version it still runs
    const ask = a.net.request(b.identity.publicKey, SYNC_PROTOCOL, encodeJson({ type: KINDS.snapshot, contextId }), { timeoutMs: 3_000, maxResponseFrameBytes: 1 << 20 });
    await expect(ask).rejects.toMatchObject({ kind: 'refused', message: expect.stringMatching(/no snapshot from here: .*not migrated/) });

    await migrate(b);
    await until('B merges what it deferred', () => sameState([a, b], contextId));
    expect(await call(b, contextId, 'get', { key: 'after' }, true)).toBe('new-code');
    expect((await b.sync.view(contextId)).reasons.map((r) => r.reason)).not.toContain('upgrade_pending');
  });
});
