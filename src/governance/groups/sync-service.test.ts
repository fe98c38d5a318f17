/**
 * "Join, then sync" when the join answered pending (no member peer reachable then): the sync a
 * client sends at once must see what the retry of that join stores, even while a heartbeat or a new
 * connection is retrying it at that very moment (docs/governance.md "Acknowledged joins"). The
 * joiner's fetch of the namespace is held at a gate the test opens, so the retry is in flight
 * exactly when the sync arrives. Also: joins of one group run one after another (one join op, both
 * answered), a repeated join answers again without a second op, and the sync's refusals (unknown
 * group, still no member reachable, a refused pending join).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryHub } from '../../network/memory.ts';
import { HearthError } from '../../errors.ts';
import type { RemoteJoin } from '../invitations/service.ts';
import { INVITATION_OPS } from '../invitations/ops.ts';
import type { GovernanceReplicator } from '../replication/replicator.ts';
import { repNode, type RepNode } from '../replication/testkit.ts';
import { TEST_APP, type GovNode } from '../testkit.ts';
import { syncGroup } from './sync-service.ts';

interface Node extends RepNode {
  /** closes the gate in front of this node's namespace fetches; `open` lets the held ones through */
  gate: { close(): void; open(): void; waiting: number };
  fetches: number;
}

const running: GovernanceReplicator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

async function node(hub: MemoryHub, startMs: number, opts: { ticks?: boolean } = {}): Promise<Node> {
  let closed = false;
  let release: (() => void)[] = [];
  const n = { fetches: 0 } as Node;
  const gate = {
    close: () => void (closed = true),
    open: () => {
      closed = false;
      for (const r of release.splice(0)) r();
    },
    get waiting() {
      return release.length;
    },
  };
  // the replicator's fetch, held while the gate is closed: a slow peer or a loaded machine
  const gated = (replicator: GovernanceReplicator): RemoteJoin => ({
    fetchForInvitation: async (inv, signal) => {
      n.fetches++;
      if (closed) await new Promise<void>((r) => release.push(r));
      return replicator.fetchForInvitation(inv, signal);
    },
  });
  // a long heartbeat: only connections retry pending joins here; `ticks: false`, not even those
  const r = await repNode(hub, startMs, running, { heartbeatMs: 60_000, retryPendingOnTick: opts.ticks !== false, remote: gated });
  return Object.assign(n, r, { gate });
}

async function until(what: string, ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sync = (n: Node, groupId: string) => syncGroup({ governance: n.governance, groups: n.groups, invitations: n.joiner, sync: n.replicator }, groupId);
const joinOps = async (n: GovNode, nsId: string) => (await n.governance.ops(nsId)).filter((o) => o.kind === INVITATION_OPS.joined);
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** A founds a namespace; B, not connected to it, joins with an invitation without address hints: pending. */
async function pendingJoin(bOpts: { ticks?: boolean } = {}) {
  const hub = new MemoryHub();
  const a = await node(hub, 1_700_000_000_000);
  const b = await node(hub, 1_700_000_000_300, bOpts);
  const ns = await a.namespaces.found({ applicationId: TEST_APP });
  const { invitation } = await a.joiner.invite(ns.id, { admitterAddrs: [] });
  expect((await b.joiner.join(copy(invitation), ns.id)).pending).toBe(true);
  expect(b.governance.namespace(ns.id)).toBeUndefined();
  return { hub, a, b, nsId: ns.id, invitation };
}

describe('sync right after a join answered pending', () => {
  it('waits for the retry a new connection started, and answers the group with this node in it', async () => {
    const { hub, a, b, nsId } = await pendingJoin();
    b.gate.close();
    hub.link(a.identity.publicKey, b.identity.publicKey); // B's connection retries its pending join: held at the gate
    await until('the retry is in flight', () => b.gate.waiting === 1);
    const synced = sync(b, nsId); // the client's next call, while the retry is in flight
    setTimeout(() => b.gate.open(), 30);
    const { ns, group } = await synced;
    expect(ns.id).toBe(nsId);
    expect(group.members[b.identity.accountId]).toBeDefined();
    expect(b.fetches).toBe(2); // the join, the connection's retry: the sync made no third attempt
    expect(await b.joiner.pendingJoin(nsId)).toBeUndefined();
    expect(await joinOps(b, nsId)).toHaveLength(1);
  });

  it('with no retry in flight, the sync retries the join itself', async () => {
    const { hub, a, b, nsId } = await pendingJoin({ ticks: false });
    hub.link(a.identity.publicKey, b.identity.publicKey); // nothing retries on this connection
    expect(b.governance.namespace(nsId)).toBeUndefined();
    const { group } = await sync(b, nsId);
    expect(group.members[b.identity.accountId]).toBeDefined();
    expect(b.fetches).toBe(2);
    expect(await b.joiner.pendingJoin(nsId)).toBeUndefined();
  });

  it('joins of one group run one after another: one join op, every caller answered', async () => {
    const { hub, a, b, nsId, invitation } = await pendingJoin();
    b.gate.close();
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await until('the retry is held', () => b.gate.waiting === 1);
    const again = b.joiner.join(copy(invitation), nsId); // the client repeats its join meanwhile
    const twice = b.joiner.join(copy(invitation), nsId);
    b.gate.open();
    expect(await again).toMatchObject({ groupId: nsId, pending: false, memberAccount: b.identity.accountId });
    expect(await twice).toMatchObject({ groupId: nsId, pending: false });
    expect(await joinOps(b, nsId)).toHaveLength(1);
    await until('A has the join', () => a.governance.namespace(nsId)!.groups[nsId]!.members[b.identity.accountId] !== undefined);
    expect(await joinOps(a, nsId)).toHaveLength(1);
    // a join repeated later (a client retrying after a lost answer): the same answer, no second op
    expect(await b.joiner.join(copy(invitation), nsId)).toMatchObject({ pending: false });
    expect(await joinOps(b, nsId)).toHaveLength(1);
  });
});

describe('sync refusals', () => {
  it('an unknown group is 404; a pending join with no member reachable is 404 saying so, and stays pending', async () => {
    const { b, nsId } = await pendingJoin();
    await expect(sync(b, 'ef'.repeat(32))).rejects.toMatchObject({ kind: 'not_found', message: `group '${'ef'.repeat(32)}' not found` });
    await expect(sync(b, nsId)).rejects.toMatchObject({ kind: 'not_found', message: expect.stringMatching(/join is pending until a member node answers/) });
    expect(await b.joiner.pendingJoin(nsId)).toBeDefined();
  });

  it('a pending join a member peer now refuses (revoked) is dropped, and the sync answers the refusal', async () => {
    const { hub, a, b, nsId, invitation } = await pendingJoin({ ticks: false });
    await a.joiner.revoke(nsId, { invitation: copy(invitation) });
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await expect(sync(b, nsId)).rejects.toMatchObject({ kind: 'forbidden', message: expect.stringMatching(/revoked/) });
    expect(await b.joiner.pendingJoin(nsId)).toBeUndefined();
    expect(b.governance.namespace(nsId)).toBeUndefined();
    await expect(sync(b, nsId)).rejects.toMatchObject({ kind: 'not_found', message: `group '${nsId}' not found` });
  });

  it('refused to the retry in flight: the sync waiting for it answers the same refusal', async () => {
    const { hub, a, b, nsId, invitation } = await pendingJoin();
    await a.joiner.revoke(nsId, { invitation: copy(invitation) });
    b.gate.close();
    hub.link(a.identity.publicKey, b.identity.publicKey);
    await until('the connection’s retry is held', () => b.gate.waiting === 1);
    const synced = sync(b, nsId);
    setTimeout(() => b.gate.open(), 30);
    await expect(synced).rejects.toMatchObject({ kind: 'forbidden', message: expect.stringMatching(/revoked/) });
    expect(b.fetches).toBe(2); // it waited for the retry, made no attempt of its own
    expect(await b.joiner.pendingJoin(nsId)).toBeUndefined();
  });
});
