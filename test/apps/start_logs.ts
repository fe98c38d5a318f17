// A module whose start function calls the host (it logs at instantiation): its effects belong to
// every call, so it must not be instantiated once and reused (src/runtime/instances.ts).
// AssemblyScript source; built by test/helpers/wasm-apps.ts.
import * as sdk from './lib/sdk';

sdk.log('started');

export function hello(): void {
  sdk.returnOk('"hello"');
}
