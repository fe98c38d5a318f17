/**
 * Benchmark (issue #14): an authenticated `GET /admin-api/peers` — the guard verifies the bearer
 * token and its key on every request — against a bare node:http server answering a GET, both
 * driven by the same external load generator in the same run. Goal: ratio >= 0.7.
 */
import { CONNECTIONS, fmtRps, loadNote, measure, rows, startBare, startNode } from './harness.ts';

export async function benchHttp(): Promise<void> {
  console.log(`# HTTP: authenticated GET vs bare (${CONNECTIONS} connections; ${loadNote()})`);
  const node = await startNode();
  const bare = await startBare();
  try {
    const headers = { authorization: `Bearer ${node.token}` };
    const baseline = await measure({ url: `${bare.url}/` });
    const peers = await measure({ url: `${node.url}/admin-api/peers`, headers });
    const ratio = peers.rps / baseline.rps;
    console.log(`bare GET:                     ${fmtRps(baseline)}, errors ${baseline.errors}`);
    console.log(`GET /admin-api/peers (bearer): ${fmtRps(peers)}, errors ${peers.errors}`);
    rows.push({ measure: 'authenticated GET /admin-api/peers', hearth: fmtRps(peers), baseline: fmtRps(baseline), ratio, goal: '>= 0.70', met: ratio >= 0.7 && peers.errors === 0 });
  } finally {
    await bare.stop();
    await node.stop();
  }
}
