/**
 * Benchmark (issue #24, noted: "a private node in a network without any relay keeps libp2p's relay
 * search running"): the idle CPU of a small network without a relay where one node looks for one,
 * with libp2p's relay transport as shipped (its random walk never ends) and with hearth's bounded
 * search (src/network/relay-search.ts), against the same network where nobody looks (baseline).
 * The network (src/network/relay-search-lab.ts): four libp2p nodes in this process on 127.0.0.1,
 * hearth's DHT protocol, no relay server. After a settle of BENCH_SETTLE_MS (default 3 s), this
 * process's CPU time over BENCH_IDLE_MS (default 20 s). Ratios are against the baseline of the
 * same run; on a loaded machine read them, not the absolute figures.
 *
 *   npx tsx bench/relay-search-idle.ts
 */
import { loadavg } from 'node:os';
import { relaySearchLab, type SearchVariant } from '../src/network/relay-search-lab.ts';

const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 3_000);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 20_000);

console.log(`# relay search on an idle network without a relay (4 nodes in one process; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
const cpu: Partial<Record<SearchVariant, number>> = {};
for (const variant of ['nobody looks', 'libp2p search', 'bounded search'] as SearchVariant[]) {
  const lab = await relaySearchLab(variant);
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const before = process.cpuUsage();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const used = process.cpuUsage(before);
    const ms = (used.user + used.system) / 1000;
    cpu[variant] = ms;
    const walk = variant === 'bounded search' ? `; walk rounds ${lab.counts.rounds}, peers walked ${lab.counts.peers}` : '';
    console.log(`${variant.padEnd(15)} ${ms.toFixed(0).padStart(7)} ms CPU in ${IDLE_MS} ms (${((ms / IDLE_MS) * 100).toFixed(1)} % of a core)${walk}`);
  } finally {
    await lab.stop();
  }
}
const base = Math.max(1, cpu['nobody looks']!);
console.log(`against the baseline: libp2p search ${(cpu['libp2p search']! / base).toFixed(1)}x, bounded search ${(cpu['bounded search']! / base).toFixed(1)}x`);
