/**
 * The account session's scope (admin spec "Namespaces": "a namespace outside an account session's
 * scope answers 404"; Authentication rule 2). Hearth issues node-owner sessions only and every call
 * acts as this node's account, so a session's scope is the set of namespaces that account takes part
 * in: it holds a row (or inherits one) in some group of the namespace. A namespace the node still
 * stores but its account has left or been removed from answers 404 like an unknown one.
 */
import { isMember } from '../authority.ts';
import type { NamespaceState } from '../types.ts';

export function inAccountScope(ns: NamespaceState, account: string): boolean {
  if (ns.hidden) return false;
  return Object.values(ns.groups).some((g) => isMember(ns, g, account));
}
