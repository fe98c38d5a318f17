/**
 * Benchmark (issue #22 item 3): the runtime's own main-thread CPU per call — `WasmRuntime.call`
 * with nothing else around it (no HTTP, no executor, no store): a guest whose `get` does nothing,
 * 32 calls in flight on the default pool, the main thread's CPU (`/proc/self/task/<pid>/stat`)
 * per call over BENCH_RPC_RUNTIME_CALLS calls (default 20,000), three rounds. What it measures is
 * the hand-off: choosing a worker, the job and its answer, the bookkeeping of the worker's cache.
 * `npx tsx bench/rpc-runtime.ts`.
 */
import { readFileSync } from 'node:fs';
import { WasmRuntime } from '../src/runtime/runtime.ts';
import { newViews, request } from '../src/runtime/test-support.ts';
import { loadNote } from './harness.ts';

const section = (id: number, body: number[]) => [id, body.length, ...body];
const name = (s: string) => [s.length, ...Buffer.from(s)];
/** exports `memory` (1 page) and `get`, whose body is a `nop` */
const NOP = Uint8Array.from([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  ...section(1, [1, 0x60, 0, 0]),
  ...section(3, [1, 0]),
  ...section(5, [1, 0, 1]),
  ...section(7, [2, ...name('memory'), 2, 0, ...name('get'), 0, 0]),
  ...section(10, [1, 3, 0, 0x01, 0x0b]),
]);

/** CPU µs of this process's main thread so far (Linux) */
function mainCpuUs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 1e4; // USER_HZ = 100
}

export async function benchRpcRuntime(calls = Number(process.env.BENCH_RPC_RUNTIME_CALLS ?? 20_000)): Promise<void> {
  console.log(`# runtime's main thread per call, nop guest, 32 in flight (${loadNote()})`);
  const rt = new WasmRuntime();
  await rt.start({ warm: true });
  try {
    const views = newViews();
    const run = async (n: number) => {
      let i = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (i++ < n) {
            const r = await rt.call({ ...request('nop', NOP, 'get', { key: 'k1' }, views), readOnly: true, stateVersion: 1 });
            if (!r.ok) throw new Error(r.message);
          }
        }),
      );
    };
    await run(calls / 4);
    for (let round = 1; round <= 3; round++) {
      const [cpu0, t0] = [mainCpuUs(), performance.now()];
      await run(calls);
      const secs = (performance.now() - t0) / 1000;
      console.log(`round ${round}: main thread ${((mainCpuUs() - cpu0) / calls).toFixed(1)} µs CPU per call, ${(calls / secs).toFixed(0)} calls/s`);
    }
  } finally {
    await rt.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRpcRuntime();
