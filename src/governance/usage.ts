/**
 * `GET /admin-api/usage` (admin spec "Node": JSON value, not shown; admin-wire-a §2 gives the
 * reference's flat shape): one row per namespace in this node's scope with its counts and the bytes
 * it takes here — application state, private state and delta records of the contexts this node
 * holds, and the governance log. Byte values are estimates (keys plus values, JSON length of
 * records), computed when asked.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Errors, Hex32 } from '../http/response-schemas.ts';
import type { Governance } from './log.ts';
import { inAccountScope } from './namespaces/scope.ts';
import type { NamespaceUsage } from '../wire/usage.ts';

export interface ContextUsage {
  state: bigint;
  privateState: bigint;
  delta: bigint;
}

export interface UsageDeps {
  governance: Governance;
  account: () => string;
  /** what a context takes here; undefined when this node does not hold it */
  contextUsage(contextId: string): Promise<ContextUsage | undefined>;
}


export async function usageView(d: UsageDeps): Promise<{ namespaces: NamespaceUsage[] }> {
  const rows: NamespaceUsage[] = [];
  for (const ns of d.governance.namespaces()) {
    if (!inAccountScope(ns, d.account())) continue;
    const groups = Object.values(ns.groups);
    const contexts = [...new Set(groups.flatMap((g) => Object.keys(g.contexts)))];
    const members = new Set(groups.flatMap((g) => Object.keys(g.members)));
    const bytes = { state: 0, privateState: 0, delta: 0, governance: 0, total: 0 };
    for (const c of contexts) {
      const u = await d.contextUsage(c);
      if (!u) continue;
      bytes.state += Number(u.state);
      bytes.privateState += Number(u.privateState);
      bytes.delta += Number(u.delta);
    }
    for (const op of await d.governance.ops(ns.id)) bytes.governance += JSON.stringify(op).length;
    bytes.total = bytes.state + bytes.privateState + bytes.delta + bytes.governance;
    rows.push({ namespaceId: ns.id, contextCount: contexts.length, memberCount: members.size, subgroupCount: groups.length - 1, bytes });
  }
  return { namespaces: rows };
}

const Bytes = Type.Integer({ minimum: 0, description: 'bytes (estimate)' });
const UsageAnswer = Type.Object({
  namespaces: Type.Array(
    Type.Object({
      namespaceId: Hex32(),
      contextCount: Type.Integer({ minimum: 0 }),
      memberCount: Type.Integer({ minimum: 0, description: 'distinct accounts with a direct row in some group' }),
      subgroupCount: Type.Integer({ minimum: 0 }),
      bytes: Type.Object({ state: Bytes, privateState: Bytes, delta: Bytes, governance: Bytes, total: Bytes }),
    }),
  ),
});

export function registerUsageRoute(app: FastifyInstance, deps: UsageDeps): void {
  app.get('/admin-api/usage', { schema: { summary: 'Per-namespace counts and storage on this node (flat)', response: { 200: UsageAnswer, ...Errors(401, 403) } } }, () => usageView(deps));
}
