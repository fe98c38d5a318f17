/**
 * Compiling and validating a guest module (runtime.md §2 "There is no `_start` and no imported
 * memory"; core `crates/runtime/src/lib.rs` `compile` / `validate_guest_module`), on the main
 * thread so the compiled module can be cached per application and posted to any worker.
 *
 * Checks, in the reference's order where it has one: module size; well-formed binary; no imported
 * memory; every import is an `env` host function of this runtime with the reference's exact type
 * (otherwise a link error naming it, as wasmer's `Error while importing`); no `_start` export; an
 * exported memory named `memory` whose initial size is within the page limit. The memory's
 * maximum is then rewritten to the limit so V8 refuses growth past 64 MiB, and, for instance reuse,
 * `memory.size` / `memory.grow` are routed through a size the host can put back (wasm-code.ts).
 */
import type { VMLimits } from './limits.ts';
import { HOST_SIGNATURES, sameType, showType } from './signatures.ts';
import { Trap } from './trap.ts';
import { virtualizeMemory } from './wasm-code.ts';
import { WasmFormatError, capMemory, exposeInstanceState, inspectModule, type FuncType, type InstanceStatePlan, type ModuleInfo } from './wasm-binary.ts';

export interface CompiledGuest {
  module: WebAssembly.Module;
  exportTypes: Record<string, FuncType>;
  /** how an instance is put back into its initial state for reuse; null: a fresh instance per call (instances.ts) */
  reuse: InstanceStatePlan | null;
}

const compileError = (m: string) => new Trap('CompileError', m);
const rejected = (reason: string) => compileError(`module rejected by validation: ${reason}`);

/** Validates and compiles (asynchronously: V8 compiles off the main thread's event loop). */
export async function compileGuest(bytes: Uint8Array, limits: VMLimits): Promise<CompiledGuest> {
  if (bytes.length > limits.maxModuleSize) {
    throw compileError(`module size limit (max_module_size) exceeded: ${bytes.length} bytes > ${limits.maxModuleSize} bytes limit`);
  }
  let info: ModuleInfo;
  try {
    info = inspectModule(bytes);
  } catch (e) {
    if (e instanceof WasmFormatError) throw compileError(`compilation error: ${e.message}`);
    throw e;
  }
  for (const imp of info.imports) {
    if (imp.kind === 'memory') {
      throw rejected(`guest imports memory \`${imp.module}::${imp.name}\`; guests must define and export their own memory, not import it from the host`);
    }
  }
  for (const imp of info.imports) {
    const expected = imp.module === 'env' ? HOST_SIGNATURES[imp.name] : undefined;
    const where = `link error: Error while importing "${imp.module}"."${imp.name}"`;
    if (!expected || imp.kind !== 'function' || !imp.type) throw compileError(`${where}: unknown import (this node does not provide it)`);
    if (!sameType(expected, imp.type)) {
      throw compileError(`${where}: incompatible import type. Expected ${showType(expected)} but received ${showType(imp.type)}`);
    }
  }
  if (info.exports.some((e) => e.name === '_start' && e.kind === 'function')) {
    throw rejected('guest exports a `_start` function; WASI command entry points are not supported (guests are invoked by explicit method name)');
  }
  if (!info.exports.some((e) => e.name === 'memory' && e.kind === 'memory') || !info.memory) {
    throw rejected('guest does not export a linear memory named `memory`; the host reads guest state through that export');
  }
  if (info.memory.min > limits.maxMemoryPages) {
    throw rejected(`guest memory starts at ${info.memory.min} pages, more than the limit of ${limits.maxMemoryPages} pages`);
  }
  let module: WebAssembly.Module;
  const capped = capMemory(bytes, limits.maxMemoryPages);
  // the memory size the guest sees made a global (so a grown instance can be put back), then the
  // instance state exported (reuse, instances.ts), when each can be done
  const virtual = virtualizeMemory(capped);
  const exposed = exposeInstanceState(virtual?.bytes ?? capped);
  try {
    module = await WebAssembly.compile((exposed?.bytes ?? virtual?.bytes ?? capped) as Uint8Array<ArrayBuffer>);
  } catch (e) {
    throw compileError(`compilation error: ${e instanceof Error ? e.message : String(e)}`);
  }
  // only the guest's own exports are methods: the added ones are not callable by name
  const exportTypes: Record<string, FuncType> = {};
  for (const e of info.exports) if (e.kind === 'function' && e.type) exportTypes[e.name] = e.type;
  let reuse: InstanceStatePlan | null = exposed?.plan ?? null;
  if (reuse && virtual) {
    // tables no instruction can change need no restoring; the size global is among `globals` too
    reuse = { ...reuse, tables: virtual.tablesMutable ? reuse.tables : [], memoryPages: virtual.pagesExport, ...(virtual.dirty ? { dirty: virtual.dirty } : {}) };
  }
  return { module, exportTypes, reuse };
}
