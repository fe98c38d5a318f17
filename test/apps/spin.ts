// Runaway guests for the runtime's limit tests: an infinite loop that never calls the host (the
// deadline test), one that writes first, and memory growth past the 64 MiB limit.
// AssemblyScript source; built by test/helpers/wasm-apps.ts.
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
