/**
 * Concurrent reads of one context (read-path.ts) against the scripted runtime: a method the ABI
 * does not mark read-only runs under the shared lock once seen changing nothing, persists nothing
 * then, and a call that turns out to write either commits its outcome (no writer in between) or
 * runs again under the exclusive lock (a writer in between): the DAG stays one chain.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Principal } from '../auth/service.ts';
import type { CallRequest } from '../runtime/call-types.ts';
import { world, type World } from './testkit.ts';
import type { ContextMeta, DeltaRecord } from './types.ts';

const owner: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };
const exec = (w: World, contextId: string, method: string, argsJson: unknown = {}) => w.calls.execute({ contextId, method, argsJson }, owner);

/**
 * A world whose `peek` (not read-only in the ABI) reads like `get`, and whose `maybe` reads or
 * writes as `mode` says; calls of each method are counted.
 */
async function scripted() {
  const w = await world();
  const contextId = (await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() })).contextId;
  const state = { mode: 'read' as 'read' | 'write' };
  const counts = new Map<string, number>();
  /** per method, whether each call reached the runtime marked `shared` (the runtime may batch it) */
  const shared = new Map<string, boolean[]>();
  const call = w.runtime.call.bind(w.runtime);
  w.runtime.call = (req: CallRequest) => {
    counts.set(req.method, (counts.get(req.method) ?? 0) + 1);
    shared.set(req.method, [...(shared.get(req.method) ?? []), req.shared === true]);
    if (req.method === 'peek') return call({ ...req, method: 'slow_get' });
    if (req.method === 'maybe') return call({ ...req, method: state.mode === 'read' ? 'slow_get' : 'slow_set' });
    return call(req);
  };
  return { w, contextId, state, counts, shared };
}

async function chain(w: World, contextId: string): Promise<DeltaRecord[]> {
  const meta = (await w.store.space<ContextMeta>('ctx.meta').get(contextId))!;
  const deltas = w.store.space<DeltaRecord>('ctx.deltas');
  const out: DeltaRecord[] = [];
  for (let id: string | undefined = meta.dagHeads[0]; id; ) {
    const d = await deltas.get(`${contextId}/${id}`);
    if (!d) break;
    out.unshift(d);
    expect(d.parents).toHaveLength(1);
    id = d.parents[0];
  }
  return out;
}

describe('reads of one context', () => {
  it('run together once the method is seen changing nothing, and write nothing to the store', async () => {
    const { w, contextId, shared } = await scripted();
    await exec(w, contextId, 'set', { key: 'x', value: '1' });
    // first call: exclusive, as any method not yet seen
    expect(await exec(w, contextId, 'peek', { key: 'x' })).toEqual({ output: '1' });
    expect(shared.get('peek')).toEqual([false]);

    const batch = vi.spyOn(w.store, 'batch');
    let release!: () => void;
    w.runtime.gates.set('slow_get', new Promise<void>((r) => (release = r)));
    w.runtime.maxActive = 0;
    const reads = Array.from({ length: 3 }, () => exec(w, contextId, 'peek', { key: 'x' }));
    await new Promise((r) => setTimeout(r, 20));
    expect(w.runtime.active).toBe(3);
    release();
    expect(await Promise.all(reads)).toEqual([{ output: '1' }, { output: '1' }, { output: '1' }]);
    expect(batch).not.toHaveBeenCalled();
    // the tries under the shared lock are marked so (the runtime may hand them to a worker together); writes never
    expect(shared.get('peek')).toEqual([false, true, true, true]);
    expect(shared.get('set')).toEqual([false]);
  });

  it('waits for a writer, and a writer waits for the readers in flight', async () => {
    const { w, contextId } = await scripted();
    await exec(w, contextId, 'peek', { key: 'x' });
    let release!: () => void;
    w.runtime.gates.set('slow_get', new Promise<void>((r) => (release = r)));
    const before = exec(w, contextId, 'peek', { key: 'x' });
    await new Promise((r) => setTimeout(r, 10));
    const write = exec(w, contextId, 'set', { key: 'x', value: '2' });
    const after = exec(w, contextId, 'peek', { key: 'x' });
    await new Promise((r) => setTimeout(r, 10));
    expect(w.runtime.active).toBe(1); // the write waits for the read in flight; the later read for the write
    release();
    expect(await Promise.all([before, write, after])).toEqual([{ output: null }, { output: null }, { output: '2' }]);
  });

  it('commits a shared attempt that wrote when no writer came in between: the call runs once', async () => {
    const { w, contextId, state, counts } = await scripted();
    await exec(w, contextId, 'maybe', { key: 'k', value: 'v' }); // reads: seen changing nothing
    state.mode = 'write';
    await exec(w, contextId, 'maybe', { key: 'k', value: 'v' }); // shared attempt, then committed as is
    expect(counts.get('maybe')).toBe(2);
    expect(await exec(w, contextId, 'peek', { key: 'k' })).toEqual({ output: 'v' });
    expect((await chain(w, contextId)).map((d) => d.parents.length)).toEqual([1, 1]); // init, maybe
  });

  it('runs a shared attempt that wrote again when a writer came in between: one chain, no lost write', async () => {
    const { w, contextId, state, counts } = await scripted();
    await exec(w, contextId, 'maybe', { key: 'k', value: 'v' });
    state.mode = 'write';
    let release!: () => void;
    w.runtime.gates.set('slow_set', new Promise<void>((r) => (release = r)));
    const maybe = exec(w, contextId, 'maybe', { key: 'k', value: 'from-maybe' }); // shared attempt, held at the gate
    await new Promise((r) => setTimeout(r, 10));
    const write = exec(w, contextId, 'set', { key: 'other', value: 'w' }); // queued: the writer goes first
    release();
    await Promise.all([maybe, write]);
    expect(counts.get('maybe')).toBe(3); // the read, the shared attempt, the exclusive rerun
    const deltas = await chain(w, contextId);
    expect(deltas).toHaveLength(3); // init, set, maybe: the rerun saw the set's head
    expect(Buffer.from(deltas[2]!.artifact, 'hex').toString()).toBe('artifact:k=from-maybe');
    expect(await exec(w, contextId, 'peek', { key: 'other' })).toEqual({ output: 'w' });
    expect(await exec(w, contextId, 'peek', { key: 'k' })).toEqual({ output: 'from-maybe' });
  });

  it('a method whose call wrote runs under the exclusive lock next time', async () => {
    const { w, contextId, state } = await scripted();
    await exec(w, contextId, 'maybe', { key: 'k', value: 'v' });
    state.mode = 'write';
    await exec(w, contextId, 'maybe', { key: 'k', value: '1' });
    let release!: () => void;
    w.runtime.gates.set('slow_set', new Promise<void>((r) => (release = r)));
    const writes = [exec(w, contextId, 'maybe', { key: 'k', value: '2' }), exec(w, contextId, 'maybe', { key: 'k', value: '3' })];
    await new Promise((r) => setTimeout(r, 10));
    expect(w.runtime.active).toBe(1);
    release();
    await Promise.all(writes);
    expect(await chain(w, contextId)).toHaveLength(4);
  });
});
