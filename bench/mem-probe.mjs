// Memory probe for bench/restart.ts (issue #22): loaded into a bench node with
// NODE_OPTIONS=--import, it writes process.memoryUsage() of each thread (the main thread and
// every runtime worker: heapUsed and heapTotal are the thread's own V8 heap, rss the process's)
// to `$HEARTH_MEM_PROBE.<threadId>` every 250 ms, with the
// main thread's heap spaces (v8.getHeapSpaceStatistics). Bench-only: the node itself knows nothing of it.
import { writeFileSync, rmSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

const base = process.env.HEARTH_MEM_PROBE;
if (base) {
  const file = `${base}.${threadId}`;
  const write = () => {
    try {
      const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]));
      writeFileSync(file, JSON.stringify({ threadId, ...process.memoryUsage(), spaces }));
    } catch {
      /* the bench removed the directory: nothing to report to */
    }
  };
  write();
  setInterval(write, 250).unref();
  // a retired worker's file goes with it when it can (a terminated worker's stays: the bench reads only fresh files)
  if (threadId !== 0) process.on('exit', () => rmSync(file, { force: true }));
}
