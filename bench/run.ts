/** `npm run bench`: runs every benchmark and prints its numbers and goals. */
import { benchAuthHealth } from './auth-health.ts';
import { benchBlobs } from './blobs.ts';
import { benchDurability } from './durability.ts';
import { benchSse } from './sse.ts';

const durationMs = Number(process.env.BENCH_MS ?? 3000);
console.log('# auth / HTTP foundation');
await benchAuthHealth(durationMs);

console.log('\n# blobs');
await benchBlobs();

console.log('\n# event stream');
await benchSse();

console.log('\n# durability: synced store writes');
await benchDurability(Math.min(durationMs, 2000));

console.log('\n# sync (context state)');
const { benchSync, printSync } = await import('./sync.ts');
printSync(await benchSync());
