/**
 * classic-level's chained batch, as the store writes through one (src/store/level.ts `write`): its
 * prototype, taken from a batch of a throwaway database, for tests that watch the store's writes or
 * make one fail (an IO error).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';

export interface ChainedBatchPrototype {
  write(options?: { sync?: boolean }): Promise<void>;
}

export async function chainedBatchPrototype(): Promise<ChainedBatchPrototype> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-chained-'));
  const db = new ClassicLevel(dir);
  await db.open();
  const batch = db.batch();
  const proto = Object.getPrototypeOf(batch) as ChainedBatchPrototype;
  await batch.close();
  await db.close();
  await rm(dir, { recursive: true, force: true });
  return proto;
}
