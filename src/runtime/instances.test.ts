/**
 * Instance reuse (instances.ts): a reused instance gives every call the state of a fresh one —
 * globals, memory, heap — after successful calls, traps and memory growth; modules whose state
 * cannot be put back, or whose start function calls the host, get a fresh instance per call.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import { compileGuest } from './compile.ts';
import type { CallResult } from './call-types.ts';
import { execute } from './execute.ts';
import type { SyncBackend } from './host-state.ts';
import { InstancePool } from './instances.ts';
import { DEFAULT_LIMITS } from './limits.ts';
import { exposeInstanceState } from './wasm-binary.ts';

const backend = { hasIndexMeta: false, hasBlobs: false, get: () => undefined, range: () => [] } as unknown as SyncBackend;
const req = (method: string) => ({ method, input: new Uint8Array(), contextId: new Uint8Array(32), executorId: new Uint8Array(32), deviceId: new Uint8Array(32), readOnly: false });
const out = (r: CallResult) => (r.ok && r.output ? JSON.parse(new TextDecoder().decode(r.output)) : r);

let probe: Uint8Array;
let startLogs: Uint8Array;
beforeAll(async () => {
  [probe, startLogs] = await Promise.all([buildTestApp('reuse_probe'), buildTestApp('start_logs')]);
}, 120_000);

describe('instance reuse', () => {
  it('gives every call the state of a fresh instance: after calls, a trap, and growth', async () => {
    const g = await compileGuest(probe, DEFAULT_LIMITS);
    expect(g.reuse).not.toBeNull();
    const pool = new InstancePool(g.module, g.reuse);
    const run = (m: string) => execute(pool, g.exportTypes, req(m), backend, DEFAULT_LIMITS);
    const fresh = out(run('bump'));
    expect(fresh).toEqual([1, 1, expect.any(Number)]);
    expect(out(run('bump'))).toEqual(fresh);
    expect(run('boom')).toMatchObject({ ok: false, kind: 'WasmTrap' });
    expect(out(run('bump'))).toEqual(fresh);
    expect(pool.created).toBe(1);
    expect(pool.reused).toBe(4);
    // a call that grew the memory: the instance is kept, and the next call sees the initial size
    expect(out(run('grow'))[2]).toBe(fresh[2] + 1);
    expect(out(run('bump'))).toEqual(fresh);
    expect(pool.created).toBe(1);
  });

  it('release lets the kept instance go: the next call instantiates anew and sees the same fresh state', async () => {
    const g = await compileGuest(probe, DEFAULT_LIMITS);
    const pool = new InstancePool(g.module, g.reuse);
    const run = (m: string) => execute(pool, g.exportTypes, req(m), backend, DEFAULT_LIMITS);
    const fresh = out(run('bump'));
    out(run('grow'));
    expect(pool.created).toBe(1);
    expect(pool.release()).toBe(true);
    expect(pool.release()).toBe(false); // nothing kept any more
    expect(out(run('bump'))).toEqual(fresh);
    expect(pool.created).toBe(2);
    expect(out(run('bump'))).toEqual(fresh);
    expect(pool.created).toBe(2); // kept again after that call
  });

  it('instantiates per call when the start function calls the host: each call meets it as a fresh instance does', async () => {
    const g = await compileGuest(startLogs, DEFAULT_LIMITS);
    const fresh = execute(g.module, g.exportTypes, req('hello'), backend, DEFAULT_LIMITS);
    // (the host refuses memory access before the instance exists: a start function cannot log)
    expect(fresh).toMatchObject({ ok: false, kind: 'HostError' });
    const pool = new InstancePool(g.module, g.reuse);
    for (let i = 0; i < 2; i++) expect(execute(pool, g.exportTypes, req('hello'), backend, DEFAULT_LIMITS)).toEqual(fresh);
    expect(pool.reused).toBe(0);
    expect(pool.created).toBe(3); // the probe that found the host call, then one per call
  });
});

/** a module with one memory, exported, and one data segment (`flags` 0 = active, 1 = passive) */
function moduleWithData(flags: 0 | 1): Uint8Array<ArrayBuffer> {
  const memory = [0x05, 0x03, 0x01, 0x00, 0x01];
  const exports = [0x07, 0x0a, 0x01, 0x06, ...new TextEncoder().encode('memory'), 0x02, 0x00];
  const datacount = [0x0c, 0x01, 0x01];
  const data = flags === 0 ? [0x0b, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x2a] : [0x0b, 0x04, 0x01, 0x01, 0x01, 0x2a];
  return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...memory, ...exports, ...datacount, ...data]);
}

describe('exposeInstanceState', () => {
  it('exports mutable globals and tables under names the module does not use; refuses passive segments', () => {
    const active = moduleWithData(0);
    expect(WebAssembly.validate(active)).toBe(true);
    expect(exposeInstanceState(active)?.plan).toEqual({ globals: [], tables: [] });
    const passive = moduleWithData(1);
    expect(WebAssembly.validate(passive)).toBe(true);
    expect(exposeInstanceState(passive)).toBeNull();
    const exposed = exposeInstanceState(probe)!;
    expect(exposed.plan.globals.length).toBeGreaterThan(0);
    const names = WebAssembly.Module.exports(new WebAssembly.Module(exposed.bytes as Uint8Array<ArrayBuffer>)).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(['bump', 'memory', ...exposed.plan.globals]));
  });

  it('does not make the added exports callable as methods', async () => {
    const g = await compileGuest(probe, DEFAULT_LIMITS);
    const r = execute(new InstancePool(g.module, g.reuse), g.exportTypes, req(g.reuse!.globals[0]!), backend, DEFAULT_LIMITS);
    expect(r).toMatchObject({ ok: false, kind: 'MethodNotFound' });
  });
});
