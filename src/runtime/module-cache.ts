/**
 * Compiled guest modules, kept per application id on the main thread (runtime.md §3 step 1), and
 * which of them each worker holds. Both are bounded LRUs of the same size: a worker is sent a
 * module once and keeps it, and the main thread tells it which to drop when it holds too many.
 */
import { compileGuest, type CompiledGuest } from './compile.ts';
import type { CallJob } from './protocol.ts';
import type { CallRequest } from './call-types.ts';
import type { VMLimits } from './limits.ts';

export class ModuleCache {
  private readonly modules = new Map<string, Promise<CompiledGuest>>();
  /** the value of each compiled module's promise once it has one: a call then takes it without waiting a turn */
  private readonly settled = new WeakMap<Promise<CompiledGuest>, CompiledGuest>();

  constructor(
    private readonly limits: VMLimits,
    readonly size: number,
  ) {}

  /** number of compiled modules held */
  get held(): number {
    return this.modules.size;
  }

  /** The compiled module, already settled (no await) when it is. A compile failure is not kept. */
  compiled(req: Pick<CallRequest, 'applicationId' | 'wasm'>): CompiledGuest | Promise<CompiledGuest> {
    const p = this.pending(req);
    return this.settled.get(p) ?? p;
  }

  private pending(req: Pick<CallRequest, 'applicationId' | 'wasm'>): Promise<CompiledGuest> {
    const hit = this.modules.get(req.applicationId);
    if (hit) {
      // LRU: most recently used last
      this.modules.delete(req.applicationId);
      this.modules.set(req.applicationId, hit);
      return hit;
    }
    const p = req.wasm().then((bytes) => compileGuest(bytes, this.limits));
    this.modules.set(req.applicationId, p);
    p.then((c) => this.settled.set(p, c), () => undefined);
    p.catch(() => {
      if (this.modules.get(req.applicationId) === p) this.modules.delete(req.applicationId);
    });
    while (this.modules.size > this.size) this.modules.delete(this.modules.keys().next().value!);
    return p;
  }

  /**
   * The job's module fields for a worker holding `held` (least recently used first, updated here):
   * the module itself only when the worker does not hold it yet, and which ones it should drop.
   */
  forWorker(held: string[], key: string, compiled: CompiledGuest): Pick<CallJob, 'moduleKey' | 'module' | 'drop'> {
    const at = held.indexOf(key);
    if (at >= 0) {
      held.splice(at, 1);
      held.push(key);
      return { moduleKey: key, drop: [] };
    }
    held.push(key);
    const drop = held.splice(0, Math.max(0, held.length - this.size));
    return { moduleKey: key, module: { module: compiled.module, exportTypes: compiled.exportTypes, reuse: compiled.reuse }, drop };
  }
}
