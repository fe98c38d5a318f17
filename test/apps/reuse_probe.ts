// Instance state a call leaves behind (src/runtime/instances.ts): a mutable global, a static memory
// cell, heap allocations, a trap halfway through a change, memory growth. Every call must see the
// state of a fresh instance. AssemblyScript source; built by test/helpers/wasm-apps.ts.
import * as sdk from './lib/sdk';

let counter: i32 = 0;
const cell = memory.data(8);

function state(): string {
  return '[' + counter.toString() + ',' + load<i32>(cell).toString() + ',' + memory.size().toString() + ']';
}

/** bumps the global and the memory cell: a fresh instance answers [1,1,pages] */
export function bump(): void {
  counter++;
  store<i32>(cell, load<i32>(cell) + 1);
  sdk.returnOk(state());
}

/** changes both, then traps */
export function boom(): void {
  counter = 99;
  store<i32>(cell, 99);
  unreachable();
}

/** grows the memory by a page */
export function grow(): void {
  memory.grow(1);
  sdk.returnOk(state());
}
