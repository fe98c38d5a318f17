/**
 * Benchmark (issue #14): an authenticated `GET /admin-api/peers` — the guard verifies the bearer
 * token and its key on every request — against a bare node:http server answering a GET, both
 * driven by the same external load generator in the same run. Goal: ratio >= 0.7. Plain fastify
 * with the same route is measured too (what the framework alone costs), and each server's CPU time
 * per request is printed beside its throughput (steadier than throughput on a shared machine).
 */
import { CONNECTIONS, fmtRps, loadNote, measureWithCpu, rows, startBare, startNode } from './harness.ts';

export async function benchHttp(): Promise<void> {
  console.log(`# HTTP: authenticated GET vs bare (${CONNECTIONS} connections; ${loadNote()})`);
  const node = await startNode();
  const bare = await startBare();
  const fastify = await startBare('bench/fastify-server.mjs');
  try {
    const headers = { authorization: `Bearer ${node.token}` };
    const baseline = await measureWithCpu({ url: `${bare.url}/` }, bare.pid);
    const plain = await measureWithCpu({ url: `${fastify.url}/admin-api/peers` }, fastify.pid);
    const peers = await measureWithCpu({ url: `${node.url}/admin-api/peers`, headers }, node.pid);
    const ratio = peers.rps / baseline.rps;
    const cpu = (r: { cpuUsPerRequest: number }) => `${r.cpuUsPerRequest.toFixed(1)} µs CPU/request`;
    console.log(`bare GET:                     ${fmtRps(baseline)}, ${cpu(baseline)}, errors ${baseline.errors}`);
    console.log(`plain fastify, one route:     ${fmtRps(plain)}, ${cpu(plain)}, errors ${plain.errors} (${(plain.rps / baseline.rps).toFixed(2)} of bare)`);
    console.log(`GET /admin-api/peers (bearer): ${fmtRps(peers)}, ${cpu(peers)}, errors ${peers.errors}`);
    // the server's own CPU per request is far less sensitive to the machine's load than throughput
    console.log(`CPU per request, bare / node: ${(baseline.cpuUsPerRequest / peers.cpuUsPerRequest).toFixed(2)}; bare / plain fastify: ${(baseline.cpuUsPerRequest / plain.cpuUsPerRequest).toFixed(2)}`);
    rows.push({ measure: 'authenticated GET /admin-api/peers', hearth: fmtRps(peers), baseline: fmtRps(baseline), ratio, goal: '>= 0.70', met: ratio >= 0.7 && peers.errors === 0 });
  } finally {
    await fastify.stop();
    await bare.stop();
    await node.stop();
  }
}
