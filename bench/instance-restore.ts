/**
 * Benchmark (issue #33 "restoring a kept instance copies only what the call dirtied"): a kv_store
 * `get` on a kept instance (instances.ts), in this process, no threads — execute and put-back —
 * with the range put-back (the dirty range wasm-code.ts marks) against the whole put-back of the
 * same compiled module (its plan without `dirty`), alternated in rounds of 1,000 calls; prints the
 * medians of five rounds. `npx tsx bench/instance-restore.ts`.
 */
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { compileGuest } from '../src/runtime/compile.ts';
import type { CallResult } from '../src/runtime/call-types.ts';
import { execute } from '../src/runtime/execute.ts';
import type { SyncBackend } from '../src/runtime/host-state.ts';
import { InstancePool } from '../src/runtime/instances.ts';
import { DEFAULT_LIMITS } from '../src/runtime/limits.ts';
import { MemoryView } from '../src/runtime/test-support.ts';
import { loadNote } from './harness.ts';

const KEYS = 200;
const g = await compileGuest(await buildTestApp('kv_store'), DEFAULT_LIMITS);
const view = new MemoryView();
const backend = {
  hasIndexMeta: false,
  hasBlobs: false,
  get: (space: string, k: Uint8Array) => (space === 'state' ? view.entries.get(Buffer.from(k).toString('hex'))?.[1] : undefined),
  range: () => [],
} as unknown as SyncBackend;
const req = (method: string, input: unknown) => ({
  method,
  input: new TextEncoder().encode(JSON.stringify(input)),
  contextId: new Uint8Array(32).fill(1),
  executorId: new Uint8Array(32).fill(2),
  deviceId: new Uint8Array(32).fill(3),
  readOnly: false,
});
const run = (pool: InstancePool, method: string, input: unknown): CallResult => execute(pool, g.exportTypes, req(method, input), backend, DEFAULT_LIMITS);

console.log(`# kept-instance put-back, kv_store get, ${KEYS} keys (${loadNote()})`);
if (!g.reuse?.dirty) throw new Error('kv_store has no marked dirty range: nothing to compare');
const pools = { range: new InstancePool(g.module, g.reuse), whole: new InstancePool(g.module, { ...g.reuse, dirty: undefined }) };
for (const pool of Object.values(pools)) {
  const init = run(pool, 'init', {});
  if (init.ok) view.apply(init.writes);
  for (let i = 0; i < KEYS; i++) {
    const r = run(pool, 'set', { key: `k${i}`, value: 'v'.repeat(50) });
    if (r.ok) view.apply(r.writes);
  }
}
const us: Record<keyof typeof pools, number[]> = { range: [], whole: [] };
for (let round = 0; round < 5; round++) {
  for (const [name, pool] of Object.entries(pools) as Array<[keyof typeof pools, InstancePool]>) {
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) run(pool, 'get', { key: `k${i % KEYS}` });
    us[name].push(performance.now() - t0); // ms per 1,000 calls = µs per call
  }
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const fmt = (a: number[]) => `${median(a).toFixed(0)} µs (rounds ${a.map((x) => x.toFixed(0)).join(', ')})`;
console.log(`get on a kept instance, range put-back: ${fmt(us.range)}`);
console.log(`get on a kept instance, whole put-back: ${fmt(us.whole)}`);
console.log(`(${loadNote()} after)`);
