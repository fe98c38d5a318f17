/**
 * In-memory views and helpers for the runtime's tests (and for other domains' tests that run
 * guests): a sorted key-value view implementing `IndexView`, a way to apply a call's writes, and
 * the runaway-context tests' runtime running the `spin` test app.
 */
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import { toHex as hex } from '../crypto/ids.ts';
import type { CallRequest, CallResult, IndexView, Writes } from './call-types.ts';
import { WasmRuntime } from './runtime.ts';

export class MemoryView implements IndexView {
  readonly entries = new Map<string, [Uint8Array, Uint8Array]>();
  reads = 0;

  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    this.reads += 1;
    return this.entries.get(hex(key))?.[1];
  }

  async range(start: Uint8Array, end: Uint8Array | undefined, limit: number): Promise<Array<[Uint8Array, Uint8Array]>> {
    return [...this.entries.values()]
      .filter(([k]) => Buffer.compare(k, start) >= 0 && (!end || Buffer.compare(k, end) < 0))
      .sort((a, b) => Buffer.compare(a[0], b[0]))
      .slice(0, limit);
  }

  put(key: Uint8Array | string, value: Uint8Array | string): void {
    const k = typeof key === 'string' ? new TextEncoder().encode(key) : key;
    const v = typeof value === 'string' ? new TextEncoder().encode(value) : value;
    this.entries.set(hex(k), [k, v]);
  }

  text(key: string): string | undefined {
    const v = this.entries.get(hex(new TextEncoder().encode(key)))?.[1];
    return v && new TextDecoder().decode(v);
  }

  apply(writes: Writes): void {
    for (const [k, v] of writes) {
      if (v === null) this.entries.delete(hex(k));
      else this.entries.set(hex(k), [k, v]);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface Views {
  state: MemoryView;
  privateState: MemoryView;
  index: MemoryView;
}

export const newViews = (): Views => ({ state: new MemoryView(), privateState: new MemoryView(), index: new MemoryView() });

export const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

/** A request for `method` of the app `wasm` (application id `appId`) against `views`. */
export function request(
  appId: string,
  wasm: Uint8Array,
  method: string,
  args: unknown,
  views: Views,
  extra: Partial<CallRequest> = {},
): CallRequest {
  return {
    applicationId: appId,
    wasm: async () => wasm,
    method,
    input: new TextEncoder().encode(args === undefined ? '' : JSON.stringify(args)),
    contextId: bytes(32, 0xc1),
    executorId: bytes(32, 0xa1),
    deviceId: bytes(32, 0xd1),
    readOnly: false,
    ...views,
    ...extra,
  };
}

/** the call's output parsed as JSON (undefined when it returned nothing) */
export function output(result: { ok: boolean; output?: Uint8Array | null }): unknown {
  if (!result.ok) throw new Error(`call failed: ${JSON.stringify(result)}`);
  return result.output ? JSON.parse(new TextDecoder().decode(result.output)) : undefined;
}

/** A started runtime running the `spin` test app (test/apps/spin.ts). */
export interface SpinRuntime {
  readonly rt: WasmRuntime;
  /** calls `spin` (runs to the deadline) or `quick` (answers at once) as the context `contextId` */
  call(method: 'spin' | 'quick', contextId: Uint8Array): Promise<CallResult>;
}

/**
 * A runtime of `workers` workers and a call deadline of `deadlineMs`, started, with the `spin` app
 * built: the setup of the runaway-context tests (fairness.test.ts, throttle.test.ts). No vitest
 * hooks here: the benchmarks import this file outside the test runner, where importing vitest hangs.
 */
export async function startSpinRuntime(options: { workers: number; deadlineMs: number }): Promise<SpinRuntime> {
  const spin = await buildTestApp('spin');
  const rt = new WasmRuntime({ poolSize: options.workers, deadlineMs: options.deadlineMs, queueLimit: 64 });
  await rt.start({ warm: true });
  return { rt, call: (method, contextId) => rt.call(request('spin', spin, method, undefined, newViews(), { contextId })) };
}
