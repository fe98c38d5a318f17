/**
 * Benchmark (issue #17 finding 9): the cost of synced writes. Every write of the node's store
 * (`LevelStore.batch`) is synced before it is acknowledged; this measures acknowledged writes/s of
 * the store against the same LevelDB writing without sync, in the same run, on the same disk
 * (`BENCH_DIR`, default the OS temp directory: point it at the disk a node home lives on).
 *
 * Two loads: one writer at a time (every write pays its own fsync) and 32 concurrent writers
 * (LevelDB commits the batches queued behind an fsync together: group commit). The goal is about
 * the second, the node's shape under load: synced throughput at least 25% of unsynced.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { LevelStore } from '../src/store/level.ts';
import { rows as summary } from './harness.ts';

interface Result {
  writesPerSec: number;
}

/** A ~300-byte JSON record, about a key record or a governance op. */
const value = (i: number) => ({ id: i, who: 'x'.repeat(64), what: 'y'.repeat(200) });

async function run(write: (i: number) => Promise<void>, writers: number, durationMs: number): Promise<Result> {
  let n = 0;
  const end = Date.now() + durationMs;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (Date.now() < end) await write(n++);
    }),
  );
  return { writesPerSec: (n / (Date.now() - started)) * 1000 };
}

export async function benchDurability(durationMs = 2000): Promise<{ ratioConcurrent: number }> {
  const dir = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'hearth-bench-durability-'));
  const synced = new LevelStore(join(dir, 'synced'));
  await synced.open();
  const space = synced.space<ReturnType<typeof value>>('bench');
  const plain = new ClassicLevel<string, string>(join(dir, 'plain'), { valueEncoding: 'utf8' });
  await plain.open();
  try {
    const syncedWrite = (i: number) => synced.batch([space.putOp(`k${i}`, value(i))]);
    const plainWrite = (i: number) => plain.batch([{ type: 'put', key: `k${i}`, value: JSON.stringify(value(i)) }], { sync: false });
    const rows: [string, Result, Result][] = [];
    for (const writers of [1, 32]) {
      await run(plainWrite, writers, 200); // warm-up
      const base = await run(plainWrite, writers, durationMs);
      const sync = await run(syncedWrite, writers, durationMs);
      rows.push([`${writers} writer${writers > 1 ? 's' : ''}`, base, sync]);
    }
    for (const [name, base, sync] of rows) {
      console.log(
        `${name.padEnd(12)} unsynced ${base.writesPerSec.toFixed(0).padStart(8)} writes/s   synced ${sync.writesPerSec.toFixed(0).padStart(8)} writes/s   ratio ${(sync.writesPerSec / base.writesPerSec).toFixed(3)}`,
      );
    }
    const ratioConcurrent = rows[1][2].writesPerSec / rows[1][1].writesPerSec;
    console.log(`synced / unsynced with 32 writers: ${ratioConcurrent.toFixed(3)} (goal >= 0.25) ${ratioConcurrent >= 0.25 ? 'met' : 'NOT met'}`);
    const [, base, sync] = rows[1];
    summary.push({
      measure: 'store writes, synced, 32 writers',
      hearth: `${sync.writesPerSec.toFixed(0)} writes/s`,
      baseline: `unsynced ${base.writesPerSec.toFixed(0)} writes/s`,
      ratio: ratioConcurrent,
      goal: '>= 0.25',
      met: ratioConcurrent >= 0.25,
    });
    return { ratioConcurrent };
  } finally {
    await synced.close();
    await plain.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchDurability(Number(process.env.BENCH_MS ?? 2000));
