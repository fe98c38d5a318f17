/**
 * Client-key binding (auth spec, "Authentication": a client key acts only on the contexts and
 * groups it is bound to; elsewhere it is answered 403, event-stream subscription and JSON-RPC
 * included; auth-wire §11). A key's binding is read from its permissions (`context[<id>,...]`,
 * which the mint adds, and `group[<id>]`) and its `application_id`. This module only decides;
 * the guard and the stream/JSON-RPC handlers answer the 403.
 */
import { parseId } from '../crypto/ids.ts';
import { parsePermission } from './permissions.ts';

export interface Binding {
  contexts: string[];
  groups: string[];
  applications: string[];
}

/** A key with an empty binding is unbound: it may act wherever its permissions allow. */
export function isBound(b: Binding): boolean {
  return b.contexts.length > 0 || b.groups.length > 0 || b.applications.length > 0;
}

/**
 * The binding of a client key. Only the umbrella forms bind: `context[<id>,...]` (the mint writes
 * `context[<context_id>,<context_identity>]`) and `group[<id>]`. Scoped verbs such as
 * `context:list[<id>]` grant access but do not narrow the key; global `context` / `group` bind
 * nothing.
 */
export function bindingOf(permissions: readonly string[], applicationId?: string | null): Binding {
  const contexts: string[] = [];
  const groups: string[] = [];
  for (const s of permissions) {
    const p = parsePermission(s);
    if (p === null || p.action !== '' || p.scope === null) continue;
    if (p.category === 'context') addOnce(contexts, p.scope);
    else if (p.category === 'group') addOnce(groups, p.scope);
  }
  const applications = applicationId ? [applicationId] : [];
  return { contexts, groups, applications };
}

/** Whether `groupId` is reached from a bound group through open groups only (see {@link mayActOn}). */
function inheritsFromBound(binding: Binding, groupId: string, groupPath: MayActOptions['groupPath']): boolean {
  const path = groupPath?.(canonicalId(groupId));
  if (!path) return false;
  for (let i = 0; i + 1 < path.length; i++) {
    if (!path[i].open) return false;
    if (binding.groups.some((g) => idsEqual(g, path[i + 1].id))) return true;
  }
  return false;
}

function addOnce(list: string[], id: string): void {
  if (!list.some((x) => idsEqual(x, id))) list.push(id);
}

/** A group on the way from a target group up to its namespace root, and whether it is open. */
export interface GroupStep {
  id: string;
  open: boolean;
}

export interface MayActOptions {
  /** the application of the target context, when known: lets an application-bound key act on it */
  contextApplication?: string | null;
  /**
   * The target group and its ancestors, nearest first, with their visibility (undefined when the
   * group is unknown): lets a key bound to a group act on the open subgroups beneath it.
   */
  groupPath?: (groupId: string) => readonly GroupStep[] | undefined;
  /** the route names no target because its handler checks the ids itself (JSON-RPC, streams) */
  handlerChecks?: boolean;
}

/**
 * Whether a key with this binding may act on `target`. Unbound keys may act anywhere. A bound key
 * may act on its contexts, its groups (a namespace is its root group, so a namespace id counts as
 * a group id), its application and that application's contexts. Blobs belong to no context or
 * group on the path, so a bound key is refused there; so is a route naming no target at all,
 * unless the handler checks the ids (`handlerChecks`).
 *
 * A group binding reaches down as membership does (domain.md §4.4 "Open inheritance"): a key
 * bound to a group (or namespace) may act on a subgroup when every group from that subgroup up to
 * the bound one is `open`; the walk stops at the first restricted group. It never reaches up: a
 * key bound to a subgroup may not act on its parent or namespace (docs/security.md).
 */
export function mayActOn(binding: Binding, target: { kind: string; id: string } | undefined, opts: MayActOptions = {}): boolean {
  if (!isBound(binding)) return true;
  if (target === undefined) return opts.handlerChecks === true;
  const within = (list: readonly string[], id: string): boolean => list.some((x) => idsEqual(x, id));
  switch (target.kind) {
    case 'context':
      if (within(binding.contexts, target.id)) return true;
      return opts.contextApplication != null && within(binding.applications, opts.contextApplication);
    case 'group':
    case 'namespace':
      return within(binding.groups, target.id) || inheritsFromBound(binding, target.id, opts.groupPath);
    case 'application':
      return within(binding.applications, target.id);
    default:
      return false;
  }
}

/**
 * The comparable form of an id: 64 lowercase hex. Ids are hex on the wire (README "Id encodings")
 * but may arrive in upper case, or as base58 from older clients; a string that is neither is
 * returned unchanged and compares exactly.
 */
export function canonicalId(id: string): string {
  return parseId(id) ?? id;
}

/** Whether two ids name the same thing (hex in any case, or base58 of the same 32 bytes). */
export function idsEqual(a: string, b: string): boolean {
  return a === b || canonicalId(a) === canonicalId(b);
}
