/**
 * The steps the multi-node scenario suite (issue #21 §3, test/e2e/scenarios/) is made
 * of, in the words of the workflows that existing tooling runs against a node: install an
 * application on every node, create a namespace and a context, invite, join the namespace (no
 * context join: the joiner's node follows the namespace's contexts by itself), write, wait until
 * every node has the same root hash, read the values back.
 *
 * Every wait is bounded; `converge` measures the time from the write it follows to the same root
 * hash (and the same entries) on every node and keeps it for the suite's report.
 */
import { makeBundle } from './bundles.ts';
import { eventually, type ClusterNode } from './cluster.ts';
import { buildTestApp } from './wasm-apps.ts';

/** the uninitialised state hash (32 bytes of 0xff) */
const UNINITIALIZED = 'f'.repeat(64);

/** Builds the test application `app`, bundles it and installs it on every node; answers its id. */
export async function installEverywhere(nodes: ClusterNode[], app: string): Promise<string> {
  const bundle = await makeBundle({ wasm: await buildTestApp(app), package: `com.hearth.scenario.${app}` });
  let appId = '';
  for (const n of nodes) {
    const installed = await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', {
      method: 'POST',
      body: { path: bundle.path, metadata: [] },
    });
    appId = installed.applicationId;
  }
  return appId;
}

/** `joiner` joins namespace `ns` on an invitation that `inviter` issues; answers the join's body. */
export async function inviteAndJoin(inviter: ClusterNode, joiner: ClusterNode, ns: string): Promise<{ namespaceId: string }> {
  const { invitation } = await inviter.client.invitations.inviteToNamespace(ns);
  return joiner.client.invitations.joinNamespace(ns, invitation);
}

/**
 * Waits until `node` holds context `ctx` by itself (auto-follow), without a context join call: it
 * is listed, and its state has landed (the root hash is no longer the uninitialised one).
 */
export async function follows(node: ClusterNode, ctx: string, timeoutMs = 30_000): Promise<void> {
  await eventually(`${node.name} follows context ${ctx.slice(0, 8)}`, async () => {
    const listed = await node.client.contexts.list();
    const held = listed.find((c) => c.id === ctx);
    return held !== undefined && held.contextStateHash !== UNINITIALIZED;
  }, timeoutMs);
}

export type Entries = Record<string, string>;

export const entries = (n: ClusterNode, ctx: string) => n.client.rpc.execute<Entries>(ctx, 'entries', {});
export const rootHash = async (n: ClusterNode, ctx: string) => (await n.client.contexts.get(ctx)).contextStateHash;

/** Every node answers the same root hash (not the uninitialised one) and the same entries. */
export async function sameState(nodes: ClusterNode[], ctx: string): Promise<boolean> {
  const hashes = await Promise.all(nodes.map((n) => rootHash(n, ctx)));
  if (!hashes.every((h) => h === hashes[0] && h !== UNINITIALIZED)) return false;
  const all = await Promise.all(nodes.map((n) => entries(n, ctx)));
  return all.every((e) => JSON.stringify(sorted(e)) === JSON.stringify(sorted(all[0]!)));
}

function sorted(e: Entries): Entries {
  return Object.fromEntries(Object.entries(e).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The times from a write to the same root hash everywhere, per scenario step, for the report. */
export class ConvergenceReport {
  private readonly rows: { scenario: string; step: string; ms: number }[] = [];

  /** Waits until every node has the same state of `ctx`; records the time since `since` (ms epoch). */
  async converge(scenario: string, step: string, nodes: ClusterNode[], ctx: string, since: number, timeoutMs = 60_000): Promise<number> {
    await eventually(`${scenario}: ${step} converges on ${nodes.map((n) => n.name).join(', ')}`, () => sameState(nodes, ctx), timeoutMs);
    const ms = Date.now() - since;
    this.rows.push({ scenario, step, ms });
    return ms;
  }

  /** One line per step: printed in the test output after the suite. */
  lines(): string[] {
    return this.rows.map((r) => `${r.scenario.padEnd(44)} ${r.step.padEnd(40)} ${String(r.ms).padStart(6)} ms`);
  }
}

/** Reads every key of `expected` on `node` with `get` and answers the keys whose value differs. */
export async function mismatches(node: ClusterNode, ctx: string, expected: Entries): Promise<string[]> {
  const wrong: string[] = [];
  for (const [key, value] of Object.entries(expected)) {
    const got = await node.client.rpc.execute<string | null>(ctx, 'get', { key });
    if (got !== value) wrong.push(`${node.name}:${key}=${JSON.stringify(got)} (wanted ${JSON.stringify(value)})`);
  }
  return wrong;
}
