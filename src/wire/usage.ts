/**
 * `GET /admin-api/usage`'s rows (admin spec "Node"; admin-wire-a §2): one per namespace in the node's
 * scope, with its counts and the bytes it takes on the node. Imports nothing: see ./index.ts.
 */
export interface NamespaceUsage {
  namespaceId: string;
  contextCount: number;
  memberCount: number;
  subgroupCount: number;
  bytes: { state: number; privateState: number; delta: number; governance: number; total: number };
}
