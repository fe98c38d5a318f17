/**
 * The account session's scope (admin spec "Namespaces": "a namespace outside an account session's
 * scope answers 404"; Authentication rule 2). Hearth issues node-owner sessions only and every call
 * acts as this node's account, so a session's scope is the set of namespaces that account takes part
 * in: it holds a row (or inherits one) in some group of the namespace. A namespace the node still
 * stores but its account has left or been removed from answers 404 like an unknown one, and so does
 * every group in it: `/groups/{g}` routes resolve their group through `groupInScope`.
 */
import { notFound } from '../../errors.ts';
import { isMember } from '../authority.ts';
import type { Governance } from '../log.ts';
import type { GroupState, NamespaceState } from '../types.ts';

export function inAccountScope(ns: NamespaceState, account: string): boolean {
  if (ns.hidden) return false;
  return Object.values(ns.groups).some((g) => isMember(ns, g, account));
}

/**
 * The group and its namespace, when the namespace is in `account`'s scope; otherwise the same 404
 * as an unknown group, so a route cannot tell "left" from "never known". Every `/groups/{g}` route
 * but the invitation join (whose caller is by definition not yet in scope) resolves `{g}` here.
 */
export function groupInScope(governance: Governance, groupId: string, account: string): { ns: NamespaceState; group: GroupState } {
  const found = governance.locate(groupId);
  if (!found || !inAccountScope(found.ns, account)) throw notFound(`group '${groupId}' not found`);
  return found;
}
