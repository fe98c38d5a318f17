/**
 * Instance reuse (issues #14, #22): instantiating a guest for every call (a new linear memory, its
 * data segments, the import bindings) was the largest cost of a call in the worker. A module whose
 * whole instance state the host can put back — its memory, its mutable globals and its tables,
 * with no passive segments (`exposeInstanceState`, wasm-binary.ts), and whose start function (if
 * any) calls no host function, so that running it once is the same as running it per call — keeps
 * one instance per worker: after each call, whatever the call did (a trap included), the memory's
 * first bytes are copied back from the snapshot taken right after instantiation, the bytes past
 * them are zeroed — only those the call wrote, when the module's writes are all marked (wasm-code.ts
 * dirty range, issue #33) — and every mutable global and (when an instruction can change one) table entry
 * is reset, so the next call starts from exactly the state a fresh instance would have.
 *
 * A memory cannot shrink, and a guest built by the reference SDK grows its memory in every call
 * (its allocator takes its heap with `memory.grow`). Such a module is compiled with its memory
 * size virtualised (wasm-code.ts): the size the guest sees (`memory.size`, `memory.grow`'s
 * answers, what the host functions may touch) is a global, put back with the others, so a kept
 * instance whose real memory grew still shows each call the initial size and zeros past the
 * snapshot. A module that could not be rewritten keeps its instance only while its memory keeps
 * its size (a grown one is dropped). Host functions reach the current call's host through bindings
 * made once per instance. docs/runtime.md "Instance reuse" has the reasoning and its limits.
 */
import type { HostFn } from './host-state.ts';
import type { InstanceStatePlan } from './wasm-binary.ts';

const START_CALLED_HOST = new Error('the start function called a host function');

export interface Lease {
  instance: WebAssembly.Instance;
  /** the global holding the memory size the guest sees, in pages (a virtualised module) */
  pages?: WebAssembly.Global;
  /** the call is over: the instance goes back (reset) or away */
  done(): void;
  /** the host wrote [from, to) of the memory (a kept instance puts back only what was written) */
  wrote?(from: number, to: number): void;
}

interface Kept {
  instance: WebAssembly.Instance;
  memory: WebAssembly.Memory;
  /** the memory's bytes right after instantiation */
  pristine: Uint8Array;
  globals: Array<[WebAssembly.Global, unknown]>;
  tables: Array<[WebAssembly.Table, unknown[]]>;
  pages?: WebAssembly.Global;
  /**
   * the guest's dirty range [lo, hi) (unsigned; wasm-code.ts marks every write) and the host's, for
   * the call running now; absent for a module whose writes are not all marked (the whole memory is put back)
   */
  dirty?: { lo: WebAssembly.Global; hi: WebAssembly.Global; hostLo: number; hostHi: number };
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
    const dirty = kept.dirty;
    const wrote = dirty
      ? (from: number, to: number) => {
          if (from < dirty.hostLo) dirty.hostLo = from;
          if (to > dirty.hostHi) dirty.hostHi = to;
        }
      : undefined;
    return { instance: kept.instance, pages: kept.pages, done: () => this.giveBack(kept), wrote };
  }

  /** Makes the kept instance ahead of the first call (`WasmRuntime.prepare`); nothing for a module instantiated per call. */
  warm(): void {
    if (this.plan && !this.idle) this.idle = this.instantiate();
  }

  /**
   * Lets the kept instance go (its memory, grown or not, and its snapshot): the worker does so after a
   * long idle (worker.ts, issue #22 memory); the next call instantiates again. Answers whether one went.
   */
  release(): boolean {
    const had = this.idle !== undefined;
    this.idle = undefined;
    return had;
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
    let dirty: Kept['dirty'];
    if (plan.dirty) {
      // what the start function wrote is in the snapshot: the range starts empty (before the globals' snapshot below)
      dirty = { lo: instance.exports[plan.dirty.lo] as WebAssembly.Global, hi: instance.exports[plan.dirty.hi] as WebAssembly.Global, hostLo: Infinity, hostHi: 0 };
      dirty.lo.value = -1;
      dirty.hi.value = 0;
    }
    return {
      dirty,
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
      pages: plan.memoryPages ? (instance.exports[plan.memoryPages] as WebAssembly.Global) : undefined,
      host,
    };
  }

  private giveBack(kept: Kept): void {
    kept.host.imports = {};
    const mem = new Uint8Array(kept.memory.buffer);
    if (mem.length !== kept.pristine.length && !kept.pages) return; // grew, and its size is real: dropped
    for (const [t, entries] of kept.tables) if (t.length !== entries.length) return;
    const d = kept.dirty;
    if (d) {
      // only the bytes written since the last put-back differ from the snapshot (below it) or from
      // zero (past it: what a fresh instance's grown pages hold): every guest store and bulk write
      // widened [lo, hi) (wasm-code.ts), every host write the host range
      const lo = Math.min((d.lo.value as number) >>> 0, d.hostLo);
      const hi = Math.min(Math.max((d.hi.value as number) >>> 0, d.hostHi), mem.length);
      const p = kept.pristine.length;
      if (lo < Math.min(hi, p)) mem.set(kept.pristine.subarray(lo, Math.min(hi, p)), lo);
      if (hi > Math.max(lo, p)) mem.fill(0, Math.max(lo, p), hi);
      d.hostLo = Infinity;
      d.hostHi = 0;
      d.lo.value = -1;
      d.hi.value = 0;
    } else {
      mem.set(kept.pristine);
      // past the snapshot, what a fresh instance's grown pages hold (the guest sees none of it until it grows)
      if (mem.length > kept.pristine.length) mem.fill(0, kept.pristine.length);
    }
    for (const [g, v] of kept.globals) g.value = v;
    for (const [t, entries] of kept.tables) for (let i = 0; i < entries.length; i++) t.set(i, entries[i]);
    this.reused++;
    this.idle = kept;
  }
}
