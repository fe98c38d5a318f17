// Runaway guests for the runtime's limit tests: an infinite loop that never calls the host (the
// deadline test), one that writes first, memory growth past the 64 MiB limit, and a slow call that ends.
// AssemblyScript source; built by test/helpers/wasm-apps.ts.
import * as env from './lib/env';
import * as sdk from './lib/sdk';

let sink: i32 = 0;

export function spin(): void {
  for (;;) sink++;
}

export function write_then_spin(): void {
  sdk.storageWrite(sdk.utf8('partial'), sdk.utf8('1'));
  for (;;) sink++;
}

/** asks for more pages than the limit allows; answers what memory.grow returned */
export function grow_past_limit(): void {
  const r = memory.grow(<i32>sdk.jsonInt(sdk.readInput(), 'pages', 2000));
  sdk.returnOk('{"grow":' + r.toString() + ',"pages":' + memory.size().toString() + '}');
}

/** allocates 8 MiB blocks until the allocator fails */
export function allocate_forever(): void {
  const blocks: ArrayBuffer[] = [];
  for (;;) blocks.push(new ArrayBuffer(8 << 20));
}

export function quick(): void {
  sdk.returnOk('"done"');
}

/** a context can be created with this app (test/e2e/runtime/disconnect.e2e.test.ts) */
export function init(): void {
  sdk.commit(new ArrayBuffer(32), new ArrayBuffer(0));
}

/** a slow call that ends: looks at the host's clock until `ms` (default 100) have passed, answers how often it looked */
export function busy(): void {
  const ms = <u64>sdk.jsonInt(sdk.readInput(), 'ms', 100);
  const now = new ArrayBuffer(8);
  const d = sdk.buf(now);
  env.time_now(d);
  const start = load<u64>(changetype<usize>(now));
  let looks = 0;
  do {
    env.time_now(d);
    looks++;
  } while (load<u64>(changetype<usize>(now)) - start < ms * 1_000_000);
  sdk.returnOk(looks.toString());
}
