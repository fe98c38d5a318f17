import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { compileGuest } from '../src/runtime/compile.ts';
import { DEFAULT_LIMITS } from '../src/runtime/limits.ts';
import { createHost } from '../src/runtime/host.ts';
import { HostState } from '../src/runtime/host-state.ts';
for (const name of ['kv_flat', 'kv']) {
  const wasm = await buildTestApp(name);
  const { module } = await compileGuest(wasm, DEFAULT_LIMITS);
  console.log(name, 'imports', WebAssembly.Module.imports(module).length, 'memory', JSON.stringify(WebAssembly.Module.exports(module).filter(e=>e.kind==='memory')));
  const req = { method: 'get', input: new Uint8Array(), contextId: new Uint8Array(32), executorId: new Uint8Array(32), deviceId: new Uint8Array(32), readOnly: false };
  const backend = { hasIndexMeta: false, hasBlobs: false, get: () => undefined, range: () => [] } as never;
  const N = 5000;
  let t = performance.now();
  for (let i = 0; i < N; i++) { const state = new HostState(DEFAULT_LIMITS); let mem; const host = createHost(req, backend, state, () => mem); new WebAssembly.Instance(module, { env: host.imports }); }
  console.log(' fresh host + instance', ((performance.now() - t) / N * 1000).toFixed(1), 'us');
  t = performance.now();
  for (let i = 0; i < N; i++) { const state = new HostState(DEFAULT_LIMITS); let mem; createHost(req, backend, state, () => mem); }
  console.log(' host only', ((performance.now() - t) / N * 1000).toFixed(1), 'us');
  const state = new HostState(DEFAULT_LIMITS); let mem; const host = createHost(req, backend, state, () => mem);
  t = performance.now();
  for (let i = 0; i < N; i++) new WebAssembly.Instance(module, { env: host.imports });
  console.log(' instance, same imports', ((performance.now() - t) / N * 1000).toFixed(1), 'us');
}
