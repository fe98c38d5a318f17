// Memory probe for bench/restart.ts (issue #22): loaded into a bench node with
// NODE_OPTIONS=--import, it writes process.memoryUsage() of each thread (the main thread and
// every runtime worker: heapUsed and heapTotal are the thread's own V8 heap, rss the process's)
// to `$HEARTH_MEM_PROBE.<threadId>` every 250 ms. Bench-only: the node itself knows nothing of it.
import { writeFileSync, rmSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

const base = process.env.HEARTH_MEM_PROBE;
if (base) {
  const file = `${base}.${threadId}`;
  const write = () => {
    try {
      writeFileSync(file, JSON.stringify({ threadId, ...process.memoryUsage() }));
    } catch {
      /* the bench removed the directory: nothing to report to */
    }
  };
  write();
  setInterval(write, 250).unref();
  // a retired worker's file goes with it (the bench sums the files of the threads alive)
  if (threadId !== 0) process.on('exit', () => rmSync(file, { force: true }));
}
