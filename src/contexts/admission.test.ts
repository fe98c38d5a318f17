/**
 * Back-pressure on method calls (admission.ts, issue #23 §4): the bounds by count and bytes, per
 * context and in all; and through the executor, against the scripted runtime, a flood of writes on
 * one context answers 503 past the bound at once while the accepted ones queue on the context's
 * lock, nothing refused is applied, every accepted write is there, and the context recovers.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/service.ts';
import { HearthError } from '../errors.ts';
import { CallAdmission } from './admission.ts';
import { world, type World } from './testkit.ts';

const refusal = (fn: () => unknown): HearthError => {
  try {
    fn();
  } catch (e) {
    return e as HearthError;
  }
  throw new Error('expected a refusal');
};

describe('CallAdmission', () => {
  it('bounds pending calls per context and in all by count, with 503 and Retry-After past them', () => {
    const a = new CallAdmission({ contextCalls: 2, totalCalls: 3, contextBytes: 1_000, totalBytes: 1_000 });
    const r1 = a.admit('x', 1);
    a.admit('x', 1);
    const e = refusal(() => a.admit('x', 1));
    expect(e).toBeInstanceOf(HearthError);
    expect(e.kind).toBe('unavailable');
    expect(e.extra.retryAfterSecs).toBeGreaterThan(0);
    expect(e.message).toMatch(/context x has 2 calls pending \(the bound is 2\)/);
    a.admit('y', 1); // another context: its own bound, the total is at 3 now
    expect(refusal(() => a.admit('z', 1)).message).toMatch(/the node has 3 application calls pending/);
    expect(a.refused).toBe(2);
    r1();
    r1(); // a second release changes nothing
    expect(a.pending()).toEqual({ calls: 2, bytes: 2 });
    expect(a.pending('x')).toEqual({ calls: 1, bytes: 1 });
    a.admit('z', 1);
    expect(a.pending()).toEqual({ calls: 3, bytes: 3 });
  });

  it('bounds argument bytes per context and in all; a call larger than a bound passes alone', () => {
    const a = new CallAdmission({ contextCalls: 100, totalCalls: 100, contextBytes: 100, totalBytes: 150 });
    const big = a.admit('x', 500); // nothing pending: admitted whatever its size
    expect(refusal(() => a.admit('x', 1)).message).toMatch(/context x has 500 bytes of arguments pending \(the bound is 100\)/);
    expect(refusal(() => a.admit('y', 1)).message).toMatch(/the node has 500 bytes of call arguments pending \(the bound is 150\)/);
    big();
    expect(a.pending()).toEqual({ calls: 0, bytes: 0 });
    a.admit('x', 60);
    expect(refusal(() => a.admit('x', 41)).message).toMatch(/bytes of arguments pending/);
    a.admit('x', 40);
    a.admit('y', 50);
    expect(refusal(() => a.admit('z', 1)).message).toMatch(/150 bytes of call arguments pending/);
  });

  it('counts request bodies about to be read toward the node’s byte bound, with the pending arguments', () => {
    const a = new CallAdmission({ totalBytes: 1_000 });
    const body = a.reserveBody(5_000); // nothing pending: read whatever its size (the route's body limit rules)
    expect(refusal(() => a.reserveBody(1)).message).toMatch(/5000 bytes of call arguments and request bodies \(the bound is 1000\)/);
    body();
    body();
    const call = a.admit('x', 600);
    a.reserveBody(400);
    expect(refusal(() => a.reserveBody(1)).kind).toBe('unavailable');
    expect(a.refused).toBe(2);
    call();
    a.reserveBody(500);
  });
});

const owner: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };
const exec = (w: World, contextId: string, method: string, argsJson: unknown = {}) => w.calls.execute({ contextId, method, argsJson }, owner);
const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

describe('a flood of writes on one context', () => {
  it('answers 503 at once past the bound, applies nothing it refused, keeps every write it accepted, and recovers', async () => {
    const w = await world([], { admission: new CallAdmission({ contextCalls: 8, totalCalls: 100 }) });
    const create = () => w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() }).then((c) => c.contextId);
    const [ctx, other] = [await create(), await create()];
    let release!: () => void;
    w.runtime.gates.set('slow_set', new Promise<void>((r) => (release = r)));

    const started = Date.now();
    const writes = Array.from({ length: 30 }, (_, i) => settle(exec(w, ctx, 'slow_set', { key: `k${i}`, value: String(i) })));
    // the refused answer while the accepted writes still wait on the lock (the first one holds it)
    const refused = await Promise.race([Promise.all(writes.slice(8)), new Promise<null>((r) => setTimeout(() => r(null), 1_000))]);
    expect(refused).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
    for (const r of refused!) {
      expect(r.ok).toBe(false);
      const e = (r as { error: HearthError }).error;
      expect(e).toBeInstanceOf(HearthError);
      expect(e.kind).toBe('unavailable');
      expect(e.extra.retryAfterSecs).toBeGreaterThan(0);
    }
    expect(w.runtime.active).toBe(1);
    expect(w.executor.admission.pending(ctx).calls).toBe(8);
    // another context is not held back by this one's bound
    w.runtime.gates.delete('slow_set');
    expect(await exec(w, other, 'set', { key: 'a', value: '1' })).toEqual({ output: null });
    release();

    const outcomes = await Promise.all(writes);
    const accepted = outcomes.flatMap((r, i) => (r.ok ? [i] : []));
    expect(accepted).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(w.executor.admission.pending()).toEqual({ calls: 0, bytes: 0 });
    for (let i = 0; i < 30; i++) {
      expect(await exec(w, ctx, 'get', { key: `k${i}` })).toEqual({ output: i < 8 ? String(i) : null });
    }
    // recovered: a second round is accepted in full
    const again = await Promise.all(Array.from({ length: 8 }, (_, i) => exec(w, ctx, 'set', { key: `r${i}`, value: 'x' })));
    expect(again).toHaveLength(8);
  });

  it('a caller that goes away while its write waits for the lock frees its pending place at once; its write never runs', async () => {
    const w = await world([], { admission: new CallAdmission({ contextCalls: 2 }) });
    const ctx = (await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() })).contextId;
    let release!: () => void;
    w.runtime.gates.set('slow_set', new Promise<void>((r) => (release = r)));
    const first = w.calls.execute({ contextId: ctx, method: 'slow_set', argsJson: { key: 'a', value: '1' } }, owner);
    const gone = new AbortController();
    const waiting = settle(w.calls.execute({ contextId: ctx, method: 'slow_set', argsJson: { key: 'b', value: '2' } }, owner, gone.signal));
    await new Promise((r) => setTimeout(r, 10));
    expect(w.executor.admission.pending(ctx).calls).toBe(2);
    gone.abort();
    expect((await waiting).ok).toBe(false);
    expect(w.executor.admission.pending(ctx).calls).toBe(1);
    const third = exec(w, ctx, 'slow_set', { key: 'c', value: '3' }); // the place is free again
    release();
    await Promise.all([first, third]);
    expect(w.runtime.calls.filter((c) => c.method === 'slow_set')).toHaveLength(2);
    expect(await exec(w, ctx, 'get', { key: 'b' })).toEqual({ output: null });
    expect(await exec(w, ctx, 'get', { key: 'c' })).toEqual({ output: '3' });
  });

  it('bounds the bytes of pending arguments: large calls past it are refused, small ones still pass', async () => {
    const w = await world([], { admission: new CallAdmission({ contextBytes: 4_096, totalBytes: 1 << 20 }) });
    const ctx = (await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() })).contextId;
    let release!: () => void;
    w.runtime.gates.set('slow_set', new Promise<void>((r) => (release = r)));
    const big = 'v'.repeat(3_000);
    const first = exec(w, ctx, 'slow_set', { key: 'big1', value: big });
    const second = await settle(exec(w, ctx, 'slow_set', { key: 'big2', value: big }));
    expect(second.ok).toBe(false);
    expect((second as { error: HearthError }).error.kind).toBe('unavailable');
    const small = exec(w, ctx, 'slow_set', { key: 'small', value: 's' });
    release();
    await Promise.all([first, small]);
    expect(await exec(w, ctx, 'get', { key: 'big1' })).toEqual({ output: big });
    expect(await exec(w, ctx, 'get', { key: 'big2' })).toEqual({ output: null });
    expect(await exec(w, ctx, 'get', { key: 'small' })).toEqual({ output: 's' });
  });
});
