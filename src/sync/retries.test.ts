/**
 * Failed merges of remote deltas (issue #22 item 6): the classification, the back-off and its
 * bounds, and over the in-memory network a transient failure retried and applied, a deterministic
 * one quarantined at once, and retries that stop at their bound (count and total time).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APP_ID } from '../contexts/testkit.ts';
import type { DeltaRecord } from '../contexts/types.ts';
import { UNINITIALIZED_HASH } from '../contexts/types.ts';
import { MemoryHub } from '../network/memory.ts';
import { ApplyRetries, classifyApplyFailure, type ApplyFailureStats, type RetryPolicy } from './retries.ts';
import type { SyncOptions } from './service.ts';
import { syncNode, until, type SyncNode } from './testkit.ts';

describe('classifyApplyFailure', () => {
  it('retries what this node caused and quarantines what the guest does', () => {
    expect(classifyApplyFailure({ kind: 'Deadline', message: 'execution exceeded its deadline of 10000 ms' })).toBe('transient');
    expect(classifyApplyFailure({ kind: 'Deadline', message: 'no worker was free within 1000 ms (every worker is busy)' })).toBe('transient');
    expect(classifyApplyFailure({ kind: 'Aborted', message: 'runtime stopped' })).toBe('transient');
    expect(classifyApplyFailure({ kind: 'HostError', message: 'host panicked: the execution worker exited' })).toBe('transient');
    expect(classifyApplyFailure({ kind: 'HostError', message: 'host panicked: the worker lost the compiled module' })).toBe('transient');
    expect(classifyApplyFailure({ kind: 'HostError', message: 'storage_write: the value exceeds the limit' })).toBe('deterministic');
    for (const kind of ['AppError', 'Panic', 'WasmTrap', 'MethodNotFound', 'InvalidMethodName', 'CompileError'] as const) {
      expect(classifyApplyFailure({ kind, message: 'host panicked: not a worker loss for this kind' })).toBe('deterministic');
    }
  });
});

describe('ApplyRetries', () => {
  const delta = (id: string, contextId = 'c'): DeltaRecord => ({ id, contextId, parents: [], artifact: '', rootHash: '', author: 'a', timestampMs: 0 });
  const stats = (): ApplyFailureStats => ({ retried: 0, recovered: 0, exhausted: 0, quarantined: 0 });
  const policy: RetryPolicy = { attempts: 4, firstDelayMs: 1_000, maxDelayMs: 3_000, totalMs: 60_000, maxWaiting: 2 };

  it('doubles the delay up to its cap, counts, and stops at the number of attempts', () => {
    let now = 0;
    const s = stats();
    const r = new ApplyRetries(policy, () => now, () => undefined, s);
    const d = delta('x');
    expect(r.schedule(d, 'p')).toEqual({ attempt: 1, delayMs: 1_000 });
    expect(r.waits('c', 'x')).toBe(true);
    expect(r.holds('c', 'x')).toBe(true);
    now += 1_000;
    expect(r.schedule(d, 'p')).toEqual({ attempt: 2, delayMs: 2_000 });
    expect(r.schedule(d, 'p')).toEqual({ attempt: 3, delayMs: 3_000 });
    expect(r.schedule(d, 'p')).toEqual({ attempt: 4, delayMs: 3_000 });
    expect(r.schedule(d, 'p')).toEqual({ exhausted: 4 });
    expect(r.holds('c', 'x')).toBe(false);
    expect(s).toEqual({ retried: 4, recovered: 0, exhausted: 1, quarantined: 0 });
    r.stop();
  });

  it('never waits past the total time, and gives up once it has passed', () => {
    let now = 0;
    const s = stats();
    const r = new ApplyRetries({ ...policy, attempts: 100, maxDelayMs: 60_000, totalMs: 5_000 }, () => now, () => undefined, s);
    const d = delta('x');
    expect(r.schedule(d, undefined)).toMatchObject({ delayMs: 1_000 });
    now = 4_500;
    expect(r.schedule(d, undefined)).toMatchObject({ attempt: 2, delayMs: 500 });
    now = 5_000;
    expect(r.schedule(d, undefined)).toEqual({ exhausted: 2 });
    expect(s.exhausted).toBe(1);
    r.stop();
  });

  it('bounds the deltas waiting per context, counts a recovery once, and lets everything go on stop', () => {
    const s = stats();
    const r = new ApplyRetries(policy, () => 0, () => undefined, s);
    expect(r.schedule(delta('1'), undefined)).toMatchObject({ attempt: 1 });
    expect(r.schedule(delta('2'), undefined)).toMatchObject({ attempt: 1 });
    expect(r.schedule(delta('3'), undefined)).toBe('full');
    expect(r.schedule(delta('1', 'other'), undefined)).toMatchObject({ attempt: 1 });
    r.applied('c', '1');
    r.applied('c', '1');
    r.applied('c', 'never-failed');
    expect(s.recovered).toBe(1);
    expect(r.count('c')).toBe(1);
    r.stop();
    expect(r.count('c') + r.count('other')).toBe(0);
    expect(r.schedule(delta('4'), undefined)).toBe('stopped');
  });

  it('fires the next attempt when it is due', async () => {
    const fired: string[] = [];
    const r = new ApplyRetries({ ...policy, firstDelayMs: 5 }, () => 0, (d) => fired.push(d.id), stats());
    r.schedule(delta('x'), undefined);
    await until('the retry fired', () => fired.length === 1, 2_000);
    expect(r.waits('c', 'x')).toBe(false); // due: the next arrival runs it
    expect(r.holds('c', 'x')).toBe(true);
    r.stop();
  });
});

describe('failed merges over the network', () => {
  const running: SyncNode[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((n) => n.stop().catch(() => undefined)));
  });

  const enc = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
  async function call(n: SyncNode, contextId: string, method: string, args: Record<string, string>, readOnly = false) {
    const { result } = await n.executor.call(contextId, { method, input: enc(args), executorId: n.identity.accountId, deviceId: n.identity.publicKey, readOnly }, () => undefined);
    if (!result.ok) throw new Error(result.message);
    return result.output ? JSON.parse(new TextDecoder().decode(result.output)) : null;
  }

  /** A founds a context; B joins it and has its state. B retries fast (`applyRetry`). */
  async function pair(applyRetry: Partial<RetryPolicy>) {
    const hub = new MemoryHub();
    const options: Partial<SyncOptions> = { applyRetry };
    const a = await syncNode(hub, 1_700_000_000_000, undefined, undefined, undefined, options);
    const b = await syncNode(hub, 1_700_000_100_000, undefined, undefined, undefined, options);
    running.push(a, b);
    const ns = await a.namespaces.found({ applicationId: APP_ID });
    const { contextId } = await a.contexts.create({ groupId: ns.id, applicationId: APP_ID, initializationParams: new Uint8Array() });
    await call(a, contextId, 'set', { key: 'seed', value: 'a' });
    const { invitation } = await a.invitations.invite(ns.id, {});
    await b.invitations.join(JSON.parse(JSON.stringify(invitation)), ns.id);
    await until('the context is registered on B', () => b.contexts.registration(contextId) !== undefined);
    await b.contexts.join(contextId);
    await until('B has the state', async () => ((await b.records.getMeta(contextId))?.rootHash ?? UNINITIALIZED_HASH) !== UNINITIALIZED_HASH);
    await until('B caught up', async () => (await call(b, contextId, 'get', { key: 'seed' }, true)) === 'a');
    return { a, b, contextId };
  }

  it('a merge that missed its deadline is retried with back-off and applied; the status says so meanwhile', async () => {
    const { a, b, contextId } = await pair({ firstDelayMs: 150, attempts: 5 });
    await call(a, contextId, 'set', { key: '__transient', value: '2' });
    await until('B retries', async () => (await b.sync.view(contextId)).reasons.some((r) => r.reason === 'apply_retrying'));
    expect((await b.sync.view(contextId)).behind).toBeGreaterThan(0);
    await until('B applied it on the third attempt', async () => (await call(b, contextId, 'get', { key: '__transient' }, true)) === '2');
    expect(b.sync.applier.failures).toEqual({ retried: 2, recovered: 1, exhausted: 0, quarantined: 0 });
    const status = await b.sync.view(contextId);
    expect(status.quarantined).toBe(0);
    expect(status.reasons.map((r) => r.reason)).not.toContain('apply_retrying');
    await until('B is caught up', async () => (await b.sync.view(contextId)).caughtUp);
    expect((await b.records.getMeta(contextId))!.rootHash).toBe((await a.records.getMeta(contextId))!.rootHash);
    // B goes on merging what follows
    await call(a, contextId, 'set', { key: 'after', value: 'x' });
    await until('B merges the next write', async () => (await call(b, contextId, 'get', { key: 'after' }, true)) === 'x');
  });

  it('a merge the guest cannot do is quarantined at once, without retries', async () => {
    const { a, b, contextId } = await pair({ firstDelayMs: 20 });
    await call(a, contextId, 'set', { key: '__trap', value: 'boom' });
    await until('quarantined on B', async () => (await b.sync.view(contextId)).quarantined === 1);
    await new Promise((r) => setTimeout(r, 200)); // heartbeats and pulls meanwhile
    expect(b.sync.applier.failures).toEqual({ retried: 0, recovered: 0, exhausted: 0, quarantined: 1 });
    expect((await b.sync.view(contextId)).quarantined).toBe(1);
  });

  it('retries stop at their bound: the delta is quarantined, counted and not tried again', async () => {
    const { a, b, contextId } = await pair({ firstDelayMs: 20, maxDelayMs: 40, attempts: 3 });
    await call(a, contextId, 'set', { key: '__transient', value: 'always' });
    await until('quarantined on B after its retries', async () => (await b.sync.view(contextId)).quarantined === 1);
    expect(b.sync.applier.failures).toEqual({ retried: 3, recovered: 0, exhausted: 1, quarantined: 0 });
    const status = await b.sync.view(contextId);
    expect(status.reasons.find((r) => r.reason === 'apply_failed')?.detail).toMatch(/deadline.*still failing after 3 retries/);
    expect(status.reasons.map((r) => r.reason)).not.toContain('apply_retrying');
    await new Promise((r) => setTimeout(r, 300)); // heartbeats advertise it again: no further attempt
    expect(b.sync.applier.failures.retried).toBe(3);
    expect(await call(b, contextId, 'get', { key: '__transient' }, true)).toBeNull();
    // and the total time bounds them too, whatever the count allows (the test nodes' clock moves
    // one millisecond per reading, so "300 ms" passes after some tens of attempts)
    const c = await pair({ firstDelayMs: 10, maxDelayMs: 10, attempts: 1_000, totalMs: 300 });
    await call(c.a, c.contextId, 'set', { key: '__transient', value: 'always' });
    await until('quarantined once the time ran out', async () => (await c.b.sync.view(c.contextId)).quarantined === 1, 15_000);
    expect(c.b.sync.applier.failures.exhausted).toBe(1);
    expect(c.b.sync.applier.failures.retried).toBeLessThan(1_000);
  });
});
