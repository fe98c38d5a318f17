/**
 * A/B of the runtime workers' young-generation cap (issue #22; src/runtime/worker-retire.ts), in
 * one process, interleaved: `npx tsx bench/young-gen-ab.ts` (AB_ORDER=d,6,16: the caps in MB, `d`
 * V8's default). Each round starts a one-worker runtime per cap, writes 200 keys of `kv_store`,
 * then times 3,000 calls (one `set` in four, the rest `get`) and prints calls/s and the process's
 * CPU per call (main thread and worker). Not part of `npm run bench`: a tool to settle the cap on
 * a quiet machine (docs/performance.md "Memory and restart").
 */
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { WasmRuntime } from '../src/runtime/runtime.ts';
import { newViews, request } from '../src/runtime/test-support.ts';
import { WORKER_RESOURCE_LIMITS } from '../src/runtime/worker-retire.ts';
const wasm = await buildTestApp('kv_store');
const limits = WORKER_RESOURCE_LIMITS as { maxYoungGenerationSizeMb?: number };
const order = (process.env.AB_ORDER ?? 'd,6,16').split(',');
for (let round = 0; round < 3; round++) {
  for (const o of order) {
    const cap = o === 'd' ? undefined : Number(o);
    if (cap === undefined) delete limits.maxYoungGenerationSizeMb; else limits.maxYoungGenerationSizeMb = cap;
    const rt = new WasmRuntime({ poolSize: 1 });
    await rt.start({ warm: true });
    const v = newViews();
    const run = async (method: string, args: unknown) => {
      const r = await rt.call(request('kv', wasm, method, args, v));
      if (!r.ok) throw new Error(r.message);
      v.state.apply(r.writes);
    };
    await run('init', undefined);
    for (let i = 0; i < 200; i++) await run('set', { key: `k${i}`, value: `v${i}` });
    const c0 = process.cpuUsage(); const t0 = performance.now();
    const N = 3000;
    for (let i = 0; i < N; i++) await run(i % 4 === 0 ? 'set' : 'get', { key: `k${i % 200}`, ...(i % 4 === 0 ? { value: `w${i}` } : {}) });
    const cpu = process.cpuUsage(c0); const ms = performance.now() - t0;
    console.log(`round ${round} cap ${cap ?? 'default'}: ${(N / ms * 1000).toFixed(0)} calls/s, CPU ${((cpu.user + cpu.system) / N).toFixed(0)} µs/call`);
    await rt.stop();
  }
}
