/**
 * The multi-node scenarios that existing workflows of the reference ecosystem run (issue #21 §3),
 * in our own words, on three node processes and one test application per file
 * (`<app>.e2e.test.ts` beside this file). Each scenario works in a namespace of its own, so they share the
 * cluster without seeing each other's state. Joiners never call `POST /contexts/{id}/join`: a
 * namespace join makes the namespace's contexts readable on the joiner's node by itself
 * (auto-follow). Every convergence is asserted twice: by root hash and by reading the values back.
 * The times from a write to the same root hash everywhere are printed after the suite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpError, RpcError } from '../../../src/client/index.ts';
import { startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import {
  ConvergenceReport,
  entries,
  follows,
  installEverywhere,
  inviteAndJoin,
  mismatches,
  rootHash,
  type Entries,
} from '../../helpers/scenario.ts';

/** CAN_INVITE_MEMBERS | CAN_JOIN_OPEN_SUBGROUPS: a namespace whose members may invite others */
const OPEN_INVITATIONS = (1 << 1) | (1 << 2);

export function defineScenarios(app: string): void {
  let cluster: Cluster;
  let a: ClusterNode, b: ClusterNode, c: ClusterNode;
  let all: ClusterNode[];
  let appId: string;
  const report = new ConvergenceReport();

  async function namespace(): Promise<string> {
    return (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
  }
  async function context(on: ClusterNode, ns: string): Promise<string> {
    return (await on.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  }
  async function set(on: ClusterNode, ctx: string, key: string, value: string): Promise<void> {
    await on.client.rpc.execute(ctx, 'set', { key, value });
  }
  /** converged by root hash, then every value read back with `get` on every node */
  async function converged(scenario: string, step: string, ctx: string, since: number, expected: Entries): Promise<void> {
    await report.converge(scenario, step, all, ctx, since);
    const wrong = (await Promise.all(all.map((n) => mismatches(n, ctx, expected)))).flat();
    expect(wrong).toEqual([]);
  }

  beforeAll(async () => {
    cluster = await startCluster(3);
    [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
    all = [a, b, c];
    appId = await installEverywhere(all, app);
  }, 180_000);

  afterAll(async () => {
    process.stdout.write(`\nscenario convergence (${app}), write → same root hash on every node:\n${report.lines().join('\n')}\n`);
    await cluster?.destroy();
  });

  describe(`multi-node scenarios with the ${app} application`, { timeout: 150_000 }, () => {
    it('snapshot bootstrap: two joiners get the writes made before they joined, then a joiner’s write reaches the first node', async () => {
      const ns = await namespace();
      const ctx = await context(a, ns);
      const expected: Entries = {};
      for (let i = 0; i < 20; i++) {
        await set(a, ctx, `before-${i}`, `a${i}`);
        expected[`before-${i}`] = `a${i}`;
      }
      const joined = Date.now();
      await inviteAndJoin(a, b, ns);
      await inviteAndJoin(a, c, ns);
      await follows(b, ctx);
      await follows(c, ctx);
      await converged('snapshot bootstrap', 'two joiners get 20 earlier writes', ctx, joined, expected);

      const t = Date.now();
      await set(c, ctx, 'from-joiner', 'c');
      expected['from-joiner'] = 'c';
      await converged('snapshot bootstrap', 'a joiner’s write reaches the others', ctx, t, expected);
      expect((await entries(a, ctx))['from-joiner']).toBe('c');
    });

    it('open invitations: the invitee invites the next node', async () => {
      const ns = await namespace();
      await a.client.settings.setDefaultCapabilities(ns, OPEN_INVITATIONS);
      const ctx = await context(a, ns);
      await set(a, ctx, 'seed', 'a');
      await inviteAndJoin(a, b, ns);
      await follows(b, ctx);
      // B, a member holding CAN_INVITE_MEMBERS by the namespace's default, invites C
      await inviteAndJoin(b, c, ns);
      await follows(c, ctx);
      const t = Date.now();
      await set(c, ctx, 'invited-by-b', 'c');
      await converged('open invitations', 'B invites C, C writes', ctx, t, { seed: 'a', 'invited-by-b': 'c' });
    });

    it('a mesh made in one step: namespace, context, every joiner; then writes from every node', async () => {
      const ns = await namespace();
      const ctx = await context(a, ns);
      await Promise.all([inviteAndJoin(a, b, ns), inviteAndJoin(a, c, ns)]);
      await Promise.all([follows(b, ctx), follows(c, ctx)]);
      const t = Date.now();
      const expected: Entries = {};
      await Promise.all(
        all.map(async (n) => {
          for (let i = 0; i < 5; i++) await set(n, ctx, `${n.name}-${i}`, String(i));
        }),
      );
      for (const n of all) for (let i = 0; i < 5; i++) expected[`${n.name}-${i}`] = String(i);
      await converged('mesh in one step', 'writes from every node', ctx, t, expected);
    });

    it('concurrent writes on two nodes in rounds, each round converging before the next', async () => {
      const ns = await namespace();
      const ctx = await context(a, ns);
      await inviteAndJoin(a, b, ns);
      await inviteAndJoin(a, c, ns);
      await Promise.all([follows(b, ctx), follows(c, ctx)]);
      const expected: Entries = {};
      for (let round = 0; round < 4; round++) {
        const t = Date.now();
        // the same key from both nodes (a conflict the merge must decide the same way everywhere)
        // and a key of each node's own
        await Promise.all([
          set(a, ctx, `shared-${round}`, `a${round}`),
          set(b, ctx, `shared-${round}`, `b${round}`),
          set(a, ctx, `a-${round}`, String(round)),
          set(b, ctx, `b-${round}`, String(round)),
        ]);
        expected[`a-${round}`] = String(round);
        expected[`b-${round}`] = String(round);
        await report.converge('concurrent rounds', `round ${round + 1}`, all, ctx, t);
        const winner = (await entries(a, ctx))[`shared-${round}`];
        expect([`a${round}`, `b${round}`]).toContain(winner);
        expected[`shared-${round}`] = winner!;
        expect((await Promise.all(all.map((n) => mismatches(n, ctx, expected)))).flat()).toEqual([]);
      }
    });

    it('a second context created while the joiners are already members is followed too', async () => {
      const ns = await namespace();
      const first = await context(a, ns);
      await inviteAndJoin(a, b, ns);
      await inviteAndJoin(a, c, ns);
      await Promise.all([follows(b, first), follows(c, first)]);
      // created right after the joins and written to at once: its registration and the joiners'
      // auto-follow race
      const second = await context(a, ns);
      const t = Date.now();
      await set(a, second, 'in-second', 'a');
      await Promise.all([follows(b, second), follows(c, second)]);
      await set(c, second, 'from-c', 'c');
      await converged('second context', 'created after the joins, followed by both', second, t, { 'in-second': 'a', 'from-c': 'c' });
      const listed = await c.client.contexts.list();
      expect(listed.map((x) => x.id)).toEqual(expect.arrayContaining([first, second]));
    });

    it('negative steps answer their documented errors, and the cluster still converges', async () => {
      const ns = await namespace();
      const ctx = await context(a, ns);
      await set(a, ctx, 'kept', 'a');

      // a method the application does not have: JSON-RPC error FunctionCallError naming it
      const missing = await a.client.rpc.execute(ctx, 'no_such_method', {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(missing).toBeInstanceOf(RpcError);
      expect((missing as RpcError).type).toBe('FunctionCallError');
      expect((missing as RpcError).message).toContain('no_such_method');

      // a key nobody wrote reads as null
      expect(await a.client.rpc.execute(ctx, 'get', { key: 'never-written' })).toBeNull();

      // a join with a tampered invitation: 400 naming the signature; B is not a member
      const { invitation } = await a.client.invitations.inviteToNamespace(ns);
      const tampered = { ...invitation, invitation: { ...invitation.invitation, invited_role: 0 } };
      const refused = await b.client.invitations.joinNamespace(ns, tampered).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(HttpError);
      expect((refused as HttpError).status).toBe(400);
      expect((refused as HttpError).message).toMatch(/signature/i);
      await expect(b.client.contexts.get(ctx)).rejects.toMatchObject({ status: 404 });

      // the genuine invitation still works, and the context converges
      await b.client.invitations.joinNamespace(ns, invitation);
      await inviteAndJoin(a, c, ns);
      await Promise.all([follows(b, ctx), follows(c, ctx)]);
      const t = Date.now();
      await set(b, ctx, 'after-errors', 'b');
      await converged('negative steps', 'converges after the refused steps', ctx, t, { kept: 'a', 'after-errors': 'b' });
      expect(await rootHash(c, ctx)).toBe(await rootHash(a, ctx));
    });
  });
}
