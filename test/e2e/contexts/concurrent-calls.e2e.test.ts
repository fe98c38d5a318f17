/**
 * Concurrent readers and writers of one context through JSON-RPC (issue #14; the argument is in
 * src/contexts/read-path.ts and docs/performance.md): an application whose ABI marks no method
 * read-only (test/apps/kv_flat.ts), writers each updating their own key in sequence while readers
 * read every key again and again. What a serial execution would give is checked: every write
 * lands (one chain of deltas, no lost update), each reader sees each key only move forward, a
 * write's author reads it back at once, and the final state is the last writes. Reads did run
 * together, and wrote nothing to the store.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import type { ContextMeta, DeltaRecord } from '../../../src/contexts/types.ts';
import type { CallRequest } from '../../../src/runtime/call-types.ts';
import { adminSdk, installTestApp } from '../../helpers/cli.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

let node: TestNode;
let c: Client;
let contextId: string;

beforeAll(async () => {
  node = await startTestNode();
  c = await adminSdk(node);
  const { appId, ns } = await installTestApp(c, 'kv_flat', 'com.hearth.concurrent');
  contextId = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
}, 120_000);
afterAll(() => node?.destroy());

const WRITERS = 3;
const ROUNDS = 12;
const READERS = 4;
const keyOf = (w: number) => `w${w}`;

it('gives concurrent readers and writers of one context the results of a serial execution', async () => {
  // calls of the context running at once in the runtime
  const runtime = node.node.runtime;
  const call = runtime.call.bind(runtime);
  let running = 0;
  let most = 0;
  runtime.call = async (req: CallRequest) => {
    running++;
    most = Math.max(most, running);
    try {
      return await call(req);
    } finally {
      running--;
    }
  };

  for (let w = 0; w < WRITERS; w++) await c.rpc.execute(contextId, 'set', { key: keyOf(w), value: '0' });
  const readBack: string[] = [];
  const seen: Array<Map<string, number>> = Array.from({ length: READERS }, () => new Map());
  const backwards: string[] = [];
  let writing = true;

  const writer = async (w: number) => {
    for (let i = 1; i <= ROUNDS; i++) {
      await c.rpc.execute(contextId, 'set', { key: keyOf(w), value: String(i) });
      // linearizable: a read that starts after the write answered sees it
      const now = await c.rpc.execute(contextId, 'get', { key: keyOf(w) });
      if (now !== String(i)) readBack.push(`${keyOf(w)}: wrote ${i}, read ${String(now)}`);
    }
  };
  const reader = async (r: number) => {
    while (writing) {
      for (let w = 0; w < WRITERS; w++) {
        const v = Number(await c.rpc.execute(contextId, 'get', { key: keyOf(w) }));
        const before = seen[r]!.get(keyOf(w)) ?? 0;
        if (v < before) backwards.push(`reader ${r}: ${keyOf(w)} went from ${before} to ${v}`);
        seen[r]!.set(keyOf(w), v);
      }
    }
  };
  const readers = Array.from({ length: READERS }, (_, r) => reader(r));
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  writing = false;
  await Promise.all(readers);

  expect(readBack).toEqual([]);
  expect(backwards).toEqual([]);
  for (let w = 0; w < WRITERS; w++) expect(await c.rpc.execute(contextId, 'get', { key: keyOf(w) })).toBe(String(ROUNDS));
  expect(await c.rpc.execute(contextId, 'len', {})).toBe(WRITERS);

  // every write committed once, each onto the head the previous one left: one chain
  const store = node.node.store;
  const meta = (await store.space<ContextMeta>('ctx.meta').get(contextId))!;
  const deltas = store.space<DeltaRecord>('ctx.deltas');
  let length = 0;
  for (let id: string | undefined = meta.dagHeads[0]; id && length < 1000; length++) {
    const d = await deltas.get(`${contextId}/${id}`);
    if (!d) break;
    expect(d.parents).toHaveLength(1);
    id = d.parents[0];
  }
  expect(length).toBe(1 + WRITERS + WRITERS * ROUNDS); // init, the first sets, every round

  // reads run together and persist nothing
  const batch = vi.spyOn(store, 'batch');
  running = 0;
  most = 0;
  const reads = await Promise.all(Array.from({ length: 24 }, (_, i) => c.rpc.execute(contextId, 'get', { key: keyOf(i % WRITERS) })));
  expect(reads.every((v) => v === String(ROUNDS))).toBe(true);
  expect(batch).not.toHaveBeenCalled();
  expect(most).toBeGreaterThan(1);
  runtime.call = call;
}, 120_000);
