/**
 * One method call of a compiled guest, start to end (runtime.md §3 "Running the call"; core
 * `crates/runtime/src/lib.rs` `execute_wasm`): validate the method name, instantiate with a fresh
 * host, call `__calimero_register_merge` when exported (its failure is ignored), resolve the method
 * (it must be typed `() -> ()`), call it, and report. Runs inside a worker in production; unit
 * tests may call it directly with a synchronous backend.
 *
 * A failed call — trap, panic, host refusal, or an application error returned through
 * `value_return` tag 1 — reports no writes and no events: the caller persists nothing (the
 * reference's early return in core `crates/context/src/handlers/execute/mod.rs`).
 */
import type { CallResult } from './call-types.ts';
import { createHost } from './host.ts';
import type { InstancePool, Lease } from './instances.ts';
import { HostState, type SyncBackend } from './host-state.ts';
import type { VMLimits } from './limits.ts';
import type { CallRequestData } from './protocol.ts';
import { Trap, appErrorMessage, wasmTrapMessage } from './trap.ts';
import type { FuncType } from './wasm-binary.ts';

/** `{c:?}` of a Rust char */
const debugChar = (c: string) => `'${c === "'" ? "\\'" : c === '\\' ? '\\\\' : c}'`;

/** The reference's `validate_method_name`: 1–max bytes of `[A-Za-z0-9_]`. */
export function methodNameError(name: string, max: number): string | null {
  if (name.length === 0) return 'method name is empty';
  const length = new TextEncoder().encode(name).length;
  if (length > max) return `method name too long: ${length} bytes (max: ${max})`;
  let position = 0;
  for (const c of name) {
    if (!/^[A-Za-z0-9_]$/.test(c)) return `method name contains invalid character at position ${position}: ${debugChar(c)}`;
    position += 1;
  }
  return null;
}

function classify(err: unknown): Trap {
  if (err instanceof Trap) return err;
  if (err instanceof WebAssembly.RuntimeError) return new Trap('WasmTrap', wasmTrapMessage(err));
  if (err instanceof RangeError && /call stack/i.test(err.message)) return new Trap('WasmTrap', 'stack overflow');
  if (err instanceof WebAssembly.LinkError) return new Trap('CompileError', `link error: ${err.message}`);
  // anything else is a fault of the host itself: the reference reports a host panic
  return new Trap('HostError', `host panicked: ${err instanceof Error ? err.message : String(err)}`);
}

export function execute(
  guest: WebAssembly.Module | InstancePool,
  exportTypes: Record<string, FuncType>,
  req: CallRequestData,
  backend: SyncBackend,
  limits: VMLimits,
): CallResult {
  const state = new HostState(limits);
  const fail = (t: Trap): CallResult => ({ ok: false, kind: t.kind, message: t.message, logs: state.logs });

  const nameError = methodNameError(req.method, limits.maxMethodNameLength);
  if (nameError) return fail(new Trap('InvalidMethodName', nameError));

  let memory: WebAssembly.Memory | undefined;
  let pages: WebAssembly.Global | undefined;
  let lease: Lease | undefined;
  const host = createHost(
    req,
    backend,
    state,
    () => memory,
    () => (pages ? (pages.value as number) * 65536 : undefined),
    (from, to) => lease?.wrote?.(from, to),
  );
  try {
    lease = guest instanceof WebAssembly.Module ? { instance: new WebAssembly.Instance(guest, { env: host.imports }), done: () => undefined } : guest.take(host.imports);
    const exported = lease.instance.exports;
    if (!(exported.memory instanceof WebAssembly.Memory)) {
      return fail(new Trap('CompileError', 'module rejected by validation: guest does not export a linear memory named `memory`'));
    }
    memory = exported.memory;
    pages = lease.pages;

    const register = exported.__calimero_register_merge;
    if (typeof register === 'function') {
      try {
        (register as () => void)();
      } catch {
        // optional hook (backward compatibility): the reference ignores its failure
      }
    }

    const method = exported[req.method];
    if (typeof method !== 'function') return fail(new Trap('MethodNotFound', `method ${JSON.stringify(req.method)} not found`));
    const type = exportTypes[req.method];
    if (!type || type.params.length > 0 || type.results.length > 0) {
      return fail(new Trap('MethodNotFound', `method ${JSON.stringify(req.method)} has invalid signature: expected no arguments and no return value`));
    }
    (method as () => void)();
  } catch (err) {
    return fail(classify(err));
  } finally {
    lease?.done();
  }

  const returned = state.returned;
  if (returned && !returned.ok) return fail(new Trap('AppError', appErrorMessage(returned.bytes)));
  return {
    ok: true,
    output: returned ? returned.bytes : null,
    logs: state.logs,
    events: state.events,
    writes: state.overlays.state.writes(),
    privateWrites: state.overlays.private.writes(),
    indexWrites: state.overlays.index.writes(),
    indexMetaWrites: state.overlays.indexMeta.writes(),
    commit: state.commit,
    xcalls: state.xcalls,
    ...(state.migrationWitness ? { migrationWitness: state.migrationWitness } : {}),
  };
}
