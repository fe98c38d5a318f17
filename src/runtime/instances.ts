/**
 * Instance reuse (issue #14): instantiating a guest for every call (a new linear memory, its data
 * segments, the import bindings) was the largest cost of a call in the worker. A module whose
 * whole instance state the host can put back — its memory, its mutable globals and its tables,
 * with no passive segments (`exposeInstanceState`, wasm-binary.ts), and whose start function (if
 * any) calls no host function, so that running it once is the same as running it per call — keeps
 * one instance per worker: after each call, whatever the call did, the memory is copied back from
 * the snapshot taken right after instantiation and every mutable global and table entry is reset,
 * so the next call starts from exactly the state a fresh instance would have. An instance whose
 * memory grew cannot be shrunk back: it is dropped and the next call instantiates anew. Host
 * functions reach the current call's host through bindings made once per instance.
 */
import type { HostFn } from './host.ts';
import type { InstanceStatePlan } from './wasm-binary.ts';

const START_CALLED_HOST = new Error('the start function called a host function');

export interface Lease {
  instance: WebAssembly.Instance;
  /** the call is over: the instance goes back (reset) or away */
  done(): void;
}

interface Kept {
  instance: WebAssembly.Instance;
  memory: WebAssembly.Memory;
  /** the memory's bytes right after instantiation */
  pristine: Uint8Array;
  globals: Array<[WebAssembly.Global, unknown]>;
  tables: Array<[WebAssembly.Table, unknown[]]>;
  /** the host functions of the call running now */
  host: { imports: Record<string, HostFn> };
}

export class InstancePool {
  private idle?: Kept;
  reused = 0;
  created = 0;

  constructor(
    private readonly module: WebAssembly.Module,
    private plan: InstanceStatePlan | null,
  ) {}

  /** An instance whose host functions are `imports` for the time of one call. */
  take(imports: Record<string, HostFn>): Lease {
    if (!this.plan) {
      this.created++;
      return { instance: new WebAssembly.Instance(this.module, { env: imports }), done: () => undefined };
    }
    const kept = this.idle ?? this.instantiate();
    this.idle = undefined;
    if (!kept) return this.take(imports);
    kept.host.imports = imports;
    return { instance: kept.instance, done: () => this.giveBack(kept) };
  }

  /** A kept instance; undefined (and no reuse from now on) when the start function called the host. */
  private instantiate(): Kept | undefined {
    this.created++;
    const host = { imports: {} as Record<string, HostFn> };
    const env: Record<string, HostFn> = {};
    for (const { module, name, kind } of WebAssembly.Module.imports(this.module)) {
      if (module === 'env' && kind === 'function') env[name] = (...args: bigint[]) => host.imports[name]!(...args);
    }
    // while instantiating, a host call means the start function calls the host: its effects would
    // belong to every call, so this module gets a fresh instance per call instead
    host.imports = new Proxy({}, { get: () => () => { throw START_CALLED_HOST; } });
    let instance: WebAssembly.Instance;
    try {
      instance = new WebAssembly.Instance(this.module, { env });
    } catch (err) {
      if (err !== START_CALLED_HOST) throw err;
      this.plan = null;
      return undefined;
    }
    const memory = instance.exports.memory as WebAssembly.Memory;
    const plan = this.plan!;
    return {
      instance,
      memory,
      pristine: new Uint8Array(memory.buffer).slice(),
      globals: plan.globals.map((n) => {
        const g = instance.exports[n] as WebAssembly.Global;
        return [g, g.value] as [WebAssembly.Global, unknown];
      }),
      tables: plan.tables.map((n) => {
        const t = instance.exports[n] as WebAssembly.Table;
        return [t, Array.from({ length: t.length }, (_, i) => t.get(i))] as [WebAssembly.Table, unknown[]];
      }),
      host,
    };
  }

  private giveBack(kept: Kept): void {
    kept.host.imports = {};
    if (kept.memory.buffer.byteLength !== kept.pristine.length) return; // grew: cannot be put back
    for (const [t, entries] of kept.tables) if (t.length !== entries.length) return;
    new Uint8Array(kept.memory.buffer).set(kept.pristine);
    for (const [g, v] of kept.globals) g.value = v;
    for (const [t, entries] of kept.tables) for (let i = 0; i < entries.length; i++) t.set(i, entries[i]);
    this.reused++;
    this.idle = kept;
  }
}
