/**
 * Issue #24 "Scale, on this machine", small: six node processes on 127.0.0.1 in one kv context,
 * 120 writes spread round-robin over all of them. Every node ends with the same state hash within
 * a deadline after the last acknowledged write, every key reads back on every node, and the
 * traffic is reported by channel (payload counters) and the gossip mesh by its size. Figures at 20
 * nodes × 2,000 writes: bench/scale.ts, docs/network.md "Scale". SCALE_E2E_NODES / SCALE_E2E_WRITES
 * change the size (12 nodes exercise the IP colocation exemption: more than 10 peers on one IP).
 */
import { expect, it } from 'vitest';
import { describeScale, runScale } from '../../helpers/scale.ts';

const NODES = Number(process.env.SCALE_E2E_NODES ?? 6);
const WRITES = Number(process.env.SCALE_E2E_WRITES ?? 120);

it(`${NODES} nodes, ${WRITES} writes spread over all: one state everywhere, every key on every node`, async () => {
  const r = await runScale({ nodes: NODES, writes: WRITES, parallel: 6, convergeTimeoutMs: 60_000, callTimeoutMs: 60_000 });
  for (const line of describeScale(r)) console.log(`scale: ${line}`);
  expect(r.nodesWithEveryKey).toBe(NODES);
  expect(r.convergeMs).toBeLessThan(60_000);
  // every node reached the others' deltas by gossip: each was delivered about once per node
  expect(r.perWrite.gossipDelivered).toBeGreaterThan(0);
  expect(r.perWrite.payloadOut.gossip).toBeGreaterThan(0);
  // gossipsub's mesh (D 4, Dhi 8) on every node, never more peers than connected
  for (const [i, m] of r.mesh.entries()) {
    expect(m).toBeGreaterThan(0);
    expect(m).toBeLessThanOrEqual(Math.min(8, r.topicPeers[i]!));
  }
  expect(r.rssMiB.every((m) => m > 0)).toBe(true);
}, 600_000);
