/**
 * The kv-store test app's replication (docs/runtime.md "Replicating the kv-store"), with the real
 * compiled wasm through the real runtime: independent replicas (separate stores, separate
 * executors) exchange commit artifacts through `__calimero_sync_next` in different orders and
 * end with the same rows, the same root and the same entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import { decodeKvArtifact, encodeKvArtifact, KV_TRAP_PREFIX, KvReplica, type KvOp } from '../../test/helpers/kv-replica.ts';
import { WasmRuntime } from './runtime.ts';

let rt: WasmRuntime;
let kv: Uint8Array;
let kvV2: Uint8Array;

beforeAll(async () => {
  [kv, kvV2] = await Promise.all([buildTestApp('kv'), buildTestApp('kv_v2')]);
  rt = new WasmRuntime({ poolSize: 2 });
  await rt.start();
}, 300_000);

afterAll(async () => {
  await rt?.stop();
});

const node = (byte: number) => new KvReplica(rt, kv, byte);

/** a fresh replica that applied `genesis` on empty state */
async function joiner(byte: number, genesis: Uint8Array): Promise<KvReplica> {
  const r = node(byte);
  const res = await r.applyDelta(genesis);
  if (!res.ok) throw new Error(res.message);
  return r;
}

async function applyAll(r: KvReplica, deltas: Uint8Array[]): Promise<void> {
  for (const d of deltas) {
    const res = await r.applyDelta(d);
    if (!res.ok) throw new Error(`${res.kind}: ${res.message}`);
  }
}

async function expectConverged(...replicas: KvReplica[]): Promise<void> {
  const [first, ...rest] = replicas;
  for (const r of rest) {
    expect(r.rows()).toEqual(first.rows());
    expect(r.root).toBe(first.root);
    expect(await r.view('entries')).toBe(await first.view('entries'));
  }
}

const hexOf = (byte: number) => Buffer.alloc(32, byte).toString('hex');

describe('kv-store deltas', () => {
  it('a joiner applying the genesis delta on empty state gets the author’s rows and root', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    expect(decodeKvArtifact(genesis.artifact)).toEqual([]);
    const b = await joiner(0xb1, genesis.artifact);
    await expectConverged(a, b);
    expect(await b.view('len')).toBe('0');
    // genesis again on a node with state changes nothing
    expect((await b.applyDelta(genesis.artifact)).ok).toBe(true);
    await expectConverged(a, b);
  });

  it('an artifact carries the call’s stamped operations; a local write stamps above the key’s stored stamp', async () => {
    const a = node(0xa1);
    await a.call('init');
    const set = await a.call('set', { key: 'k', value: 'v1' });
    const [op] = decodeKvArtifact(set.artifact);
    expect(op).toMatchObject({ kind: 'put', executor: hexOf(0xa1), key: 'k', value: 'v1', birthTime: op.time, birthExecutor: hexOf(0xa1) });
    // a remote write stamped an hour ahead wins over k; the next local write still beats it
    const future = op.time + 3_600_000_000_000n;
    await applyAll(a, [encodeKvArtifact([{ ...op, time: future, executor: hexOf(0xb1), value: 'from the future' }])]);
    expect(await a.view('get', { key: 'k' })).toBe('"from the future"');
    const again = await a.call('set', { key: 'k', value: 'v2' });
    const [next] = decodeKvArtifact(again.artifact);
    expect(next.time).toBe(future + 1n);
    expect([next.birthTime, next.birthExecutor]).toEqual([op.time, hexOf(0xa1)]);
    expect(await a.view('get', { key: 'k' })).toBe('"v2"');
    const rm = await a.call('remove', { key: 'k' });
    expect(decodeKvArtifact(rm.artifact)).toEqual([
      { kind: 'tombstone', time: future + 2n, executor: hexOf(0xa1), birthTime: 0n, birthExecutor: hexOf(0), key: 'k', value: null },
    ]);
    // calls that change nothing commit an artifact without operations
    expect(decodeKvArtifact((await a.call('remove', { key: 'k' })).artifact)).toEqual([]);
  });

  it('concurrent writes on two nodes converge whichever order the deltas arrive in', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const fromA = [(await a.call('set', { key: 'x', value: 'a1' })).artifact, (await a.call('set', { key: 'shared', value: 'from a' })).artifact];
    const fromB = [(await b.call('set', { key: 'y', value: 'b1' })).artifact, (await b.call('set', { key: 'shared', value: 'from b' })).artifact];
    await applyAll(a, fromB);
    await applyAll(b, fromA);
    await expectConverged(a, b);
    // b wrote `shared` after a did (stamps follow the wall clock): the later write wins on both
    expect(await a.view('get', { key: 'shared' })).toBe('"from b"');
    expect(JSON.parse(await a.view('entries'))).toEqual({ x: 'a1', y: 'b1', shared: 'from b' });
    // a third node applying every delta in yet another (causal) order lands on the same state
    const c = await joiner(0xc1, genesis.artifact);
    await applyAll(c, [fromB[0], fromA[0], fromB[1], fromA[1]]);
    await expectConverged(a, b, c);
  });

  it('equal times fall back to the executor, then to the value, so the order is total', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const base: KvOp = { kind: 'put', time: 5n, executor: hexOf(0x10), birthTime: 5n, birthExecutor: hexOf(0x10), key: 'k', value: 'm' };
    const deltas = [
      encodeKvArtifact([{ ...base, value: 'z' }]),
      encodeKvArtifact([{ ...base, executor: hexOf(0x20), value: 'a' }]),
      encodeKvArtifact([{ ...base, executor: hexOf(0x20), value: 'b' }]),
      encodeKvArtifact([{ ...base, kind: 'tombstone', value: null, birthTime: 0n, birthExecutor: hexOf(0) }]),
    ];
    await applyAll(a, deltas);
    await applyAll(b, [...deltas].reverse());
    await expectConverged(a, b);
    expect(await a.view('get', { key: 'k' })).toBe('"b"');
    // a tombstone arriving before the put it beats, or after it: the same rows either way
    const [c, d] = [await joiner(0xc1, genesis.artifact), await joiner(0xd1, genesis.artifact)];
    const put = encodeKvArtifact([{ ...base, key: 'j', time: 6n, birthTime: 6n }]);
    const tomb = encodeKvArtifact([{ ...base, key: 'j', time: 7n, kind: 'tombstone', value: null, birthTime: 0n, birthExecutor: hexOf(0) }]);
    await applyAll(c, [put, tomb]);
    await applyAll(d, [tomb, put]);
    await expectConverged(c, d);
    expect(c.root).toBe(genesis.root);
  });

  it('a removal and a concurrent write: the later stamp wins, and a write after seeing the removal revives the key', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const seed = await a.call('set', { key: 'k', value: 'v' });
    await applyAll(b, [seed.artifact]);
    const removed = await a.call('remove', { key: 'k' });
    expect(removed.events).toEqual([{ kind: 'Removed', data: '{"key":"k"}' }]);
    const updated = await b.call('set', { key: 'k', value: 'kept' });
    await applyAll(a, [updated.artifact]);
    await applyAll(b, [removed.artifact]);
    await expectConverged(a, b);
    expect(await a.view('get', { key: 'k' })).toBe('"kept"');
    // a removal after seeing that write wins everywhere; a later write is born again (last in entries)
    await a.call('set', { key: 'other', value: 'o' });
    const gone = await b.call('remove', { key: 'k' });
    await applyAll(a, [gone.artifact]);
    expect(await a.view('get', { key: 'k' })).toBe('null');
    const back = await b.call('set', { key: 'k', value: 'again' });
    expect(back.events[0].kind).toBe('Inserted');
    await applyAll(a, [back.artifact]);
    const last = await a.call('set', { key: 'other', value: 'o2' });
    await applyAll(b, [(await a.call('set', { key: 'third', value: 't' })).artifact]);
    // b has not seen `other` yet: it arrives after `third`, and still lands in its birth place
    await applyAll(b, [last.artifact]);
    expect(await b.view('entries')).toBe(await a.view('entries'));
  });

  it('clear removes every live key; a key inserted concurrently survives it', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const seeds = [(await a.call('set', { key: 'k1', value: '1' })).artifact, (await a.call('set', { key: 'k2', value: '2' })).artifact];
    await applyAll(b, seeds);
    const cleared = await a.call('clear');
    expect(cleared.events).toEqual([{ kind: 'Cleared', data: '' }]);
    expect(decodeKvArtifact(cleared.artifact).map((o) => [o.kind, o.key])).toEqual([
      ['tombstone', 'k1'],
      ['tombstone', 'k2'],
    ]);
    const inserted = await b.call('set', { key: 'k3', value: '3' });
    await applyAll(a, [inserted.artifact]);
    await applyAll(b, [cleared.artifact]);
    await expectConverged(a, b);
    expect(JSON.parse(await b.view('entries'))).toEqual({ k3: '3' });
  });

  it('duplicates change nothing', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const d1 = (await a.call('set', { key: 'k', value: 'v' })).artifact;
    const d2 = (await a.call('remove', { key: 'k' })).artifact;
    const d3 = (await a.call('set', { key: 'j', value: 'w' })).artifact;
    await applyAll(b, [d1, d1, d2, d1, d3, d2, d3]);
    await expectConverged(a, b);
    const before = b.rows();
    const again = await b.applyDelta(d1);
    expect(again.ok && again.events).toEqual([]);
    expect(b.rows()).toEqual(before);
  });

  it('three nodes writing concurrently converge under every arrival order', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const c = await joiner(0xc1, genesis.artifact);
    const chains: Uint8Array[][] = [[], [], []];
    const writers = [a, b, c];
    const script: Array<[number, string, unknown]> = [
      [0, 'set', { key: 'p', value: 'a' }],
      [1, 'set', { key: 'p', value: 'b' }],
      [2, 'set', { key: 'q', value: 'c' }],
      [0, 'set', { key: 'q', value: 'a' }],
      [1, 'remove', { key: 'p' }],
      [2, 'set', { key: 'r', value: 'c' }],
      [0, 'clear', undefined],
      [1, 'set', { key: 's', value: 'b' }],
      [2, 'remove', { key: 'q' }],
    ];
    for (const [w, method, args] of script) chains[w].push((await writers[w].call(method, args)).artifact);
    // each node's own chain is causal; interleave the other two chains in different ways
    await applyAll(a, [...chains[1], ...chains[2]]);
    await applyAll(b, [...chains[2], ...chains[0]]);
    const interleave = (x: Uint8Array[], y: Uint8Array[]) => x.flatMap((d, i) => [d, ...(y[i] ? [y[i]] : [])]);
    await applyAll(c, interleave(chains[1], chains[0]));
    await expectConverged(a, b, c);
    const d = await joiner(0xd1, genesis.artifact);
    await applyAll(d, interleave([...chains[2]].concat(chains[0]), chains[1]));
    await expectConverged(a, b, c, d);
  });

  it('random writes on three nodes, delivered in random causal orders with duplicates, converge', async () => {
    let seed = 0x2545f491;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const a = node(0xa1);
    const genesis = await a.call('init');
    const nodes = [a, await joiner(0xb1, genesis.artifact), await joiner(0xc1, genesis.artifact)];
    // every delta with its causal past (the deltas its author had applied when it wrote)
    const deltas: Array<{ artifact: Uint8Array; past: Set<number> }> = [];
    const applied = nodes.map(() => new Set<number>());
    const deliverable = (n: number) => deltas.map((_, i) => i).filter((i) => !applied[n].has(i) && [...deltas[i].past].every((p) => applied[n].has(p)));
    const deliver = async (n: number, i: number) => {
      await applyAll(nodes[n], [deltas[i].artifact]);
      applied[n].add(i);
    };
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (let step = 0; step < 150; step++) {
      const n = rand(3);
      const roll = rand(10);
      if (roll < 6) {
        const op = roll < 4 ? ['set', { key: keys[rand(keys.length)], value: `v${step}` }] : roll < 5 ? ['remove', { key: keys[rand(keys.length)] }] : ['clear', undefined];
        const past = new Set(applied[n]);
        deltas.push({ artifact: (await nodes[n].call(op[0] as string, op[1])).artifact, past });
        applied[n].add(deltas.length - 1);
      } else {
        const ready = deliverable(n);
        if (ready.length > 0) await deliver(n, ready[rand(ready.length)]);
        else if (applied[n].size > 0) await applyAll(nodes[n], [deltas[[...applied[n]][rand(applied[n].size)]].artifact]); // a duplicate
      }
    }
    for (let n = 0; n < 3; n++) for (let ready = deliverable(n); ready.length > 0; ready = deliverable(n)) await deliver(n, ready[rand(ready.length)]);
    await expectConverged(...nodes);
  });

  it('a joiner bootstrapped from a snapshot (rows copied verbatim) keeps converging with later deltas', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    for (const [k, v] of [['k1', '1'], ['k2', '2'], ['k3', '3']]) await applyAll(b, [(await a.call('set', { key: k, value: v })).artifact]);
    await applyAll(b, [(await a.call('remove', { key: 'k2' })).artifact]);
    const c = node(0xc1);
    c.copyFrom(a);
    await expectConverged(a, b, c);
    const fromA = (await a.call('set', { key: 'k2', value: 'back' })).artifact;
    const fromB = (await b.call('set', { key: 'k1', value: 'b' })).artifact;
    const fromC = (await c.call('set', { key: 'k4', value: 'c' })).artifact;
    await applyAll(a, [fromB, fromC]);
    await applyAll(b, [fromC, fromA]);
    await applyAll(c, [fromA, fromB]);
    await expectConverged(a, b, c);
    expect(JSON.parse(await c.view('entries'))).toEqual({ k1: 'b', k3: '3', k2: 'back', k4: 'c' });
  });

  it('keeps insertion order in entries across nodes', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    for (const k of ['zeta', 'alpha', 'mid']) await applyAll(b, [(await a.call('set', { key: k, value: k })).artifact]);
    await applyAll(b, [(await a.call('set', { key: 'zeta', value: 'updated' })).artifact]);
    expect(await b.view('entries')).toBe('{"zeta":"updated","alpha":"alpha","mid":"mid"}');
    await expectConverged(a, b);
  });
});

describe('kv-store root and cost', () => {
  it('the root depends on the live entries only, not on the order or the history that made them', async () => {
    const [a, c] = [node(0xa1), node(0xc1)];
    await a.call('init');
    await c.call('init');
    for (const [k, v] of [['x', '1'], ['y', '2']]) await a.call('set', { key: k, value: v });
    for (const [k, v] of [['y', 'old'], ['gone', '?'], ['x', '1'], ['y', '2']]) await c.call('set', { key: k, value: v });
    await c.call('remove', { key: 'gone' });
    expect(c.root).toBe(a.root);
    expect(await c.view('entries')).toBe('{"y":"2","x":"1"}');
    await c.call('set', { key: 'x', value: '3' });
    expect(c.root).not.toBe(a.root);
  });

  it('a write or a merge reads as many rows with 300 keys as with 3', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const costs: number[][] = [];
    for (const n of [3, 300]) {
      while (Number(await a.view('len')) < n) {
        const batch = Number(await a.view('len'));
        await applyAll(b, [(await a.call('set', { key: `k${batch}`, value: 'v' })).artifact]);
      }
      a.views.state.reads = 0;
      const write = await a.call('set', { key: `new${n}`, value: 'v' });
      const writeReads = a.views.state.reads;
      b.views.state.reads = 0;
      await applyAll(b, [write.artifact]);
      costs.push([writeReads, b.views.state.reads]);
    }
    expect(costs[1]).toEqual(costs[0]);
  });
});

describe('kv-store deltas that must not apply', () => {
  it('a key with the reserved prefix makes __calimero_sync_next panic on the receiver only', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    const trap = await a.call('set', { key: `${KV_TRAP_PREFIX}:x`, value: 'boom' });
    const before = b.rows();
    const r = await b.applyDelta(trap.artifact);
    expect(r).toMatchObject({ ok: false, kind: 'Panic', message: expect.stringContaining(`sync refused: the key "${KV_TRAP_PREFIX}:x" is reserved`) });
    expect(b.rows()).toEqual(before);
    // the receiver keeps serving reads and local writes
    await b.call('set', { key: 'ok', value: 'still' });
    expect(await b.view('get', { key: 'ok' })).toBe('"still"');
  });

  it('malformed artifacts panic with the reason and write nothing', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const good = (await a.call('set', { key: 'k', value: 'v' })).artifact;
    const b = await joiner(0xb1, genesis.artifact);
    const before = b.rows();
    const huge = new Uint8Array(good);
    new DataView(huge.buffer).setUint32(4, 0xffffffff, true);
    const badKind = new Uint8Array(good);
    badKind[8] = 7;
    const cases: Array<[Uint8Array, string]> = [
      [new TextEncoder().encode('kv-delta:1'), 'not a kv-store delta'],
      [good.subarray(0, good.length - 1), 'truncated'],
      [new Uint8Array([...good, 0]), '1 trailing bytes'],
      [huge, 'operations cannot fit'],
      [badKind, 'unknown operation kind 7'],
      [encodeKvArtifact([{ kind: 'put', time: 1n, executor: hexOf(1), birthTime: 1n, birthExecutor: hexOf(1), key: 'a\nb', value: 'v' }]), 'a key holds a newline'],
    ];
    for (const [artifact, reason] of cases) {
      const r = await b.applyDelta(artifact);
      expect(r).toMatchObject({ ok: false, kind: 'Panic', message: expect.stringContaining(reason) });
    }
    expect(b.rows()).toEqual(before);
    // an empty artifact is a delta without operations
    expect((await b.applyDelta(new Uint8Array())).ok).toBe(true);
    expect(b.rows()).toEqual(before);
  });
});

describe('kv_v2 migration', () => {
  it('two nodes migrating the same state write the same rows', async () => {
    const a = node(0xa1);
    const genesis = await a.call('init');
    const b = await joiner(0xb1, genesis.artifact);
    await applyAll(b, [(await a.call('set', { key: 'k', value: 'v' })).artifact]);
    const migrateOn = (r: KvReplica) => new KvReplica(rt, kvV2, r.executor[0], 'kv_v2');
    const [a2, b2] = [migrateOn(a), migrateOn(b)];
    a2.copyFrom(a);
    b2.copyFrom(b);
    await a2.call('migrate', { fromVersion: '1.0.0', toVersion: '2.0.0' });
    await b2.call('migrate', { fromVersion: '1.0.0', toVersion: '2.0.0' });
    await expectConverged(a2, b2);
    expect(JSON.parse(await b2.view('entries'))).toEqual({ k: 'v', __migrated: '1.0.0->2.0.0' });
  });
});
