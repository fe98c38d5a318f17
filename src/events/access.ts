/**
 * Who may observe what on the event stream (admin spec "Events": ids the token may not observe
 * are silently dropped; auth spec "Authentication": a client key bound to contexts or groups is
 * answered 403 outside them; reference README "Client keys on the event stream").
 *
 * - A bound client key (context, group or application binding, `auth/binding.ts`) that names any
 *   id outside its binding is refused as a whole: 403 `permission_denied`.
 * - Any other token keeps the ids it may read — a context needs `context:list[<id>]` or
 *   `context:execute[<id>]` (`admin` covers both), a group or namespace `group:list[<id>]` or
 *   `namespace:list[<id>]` — and the others are dropped without an error.
 * - Groups this node does not hold are dropped. Contexts it does not hold (yet) are kept, as the
 *   reference keeps them: a client may subscribe before it joins. An application-bound key may
 *   observe only contexts the node holds for its application.
 *
 * Ids arrive as 64 hex (any case) or base58 from older clients and are kept as 64 lowercase hex.
 */
import { isBound, mayActOn, type MayActOptions, type Principal, satisfies } from '../auth/index.ts';
import { parseId } from '../crypto/ids.ts';
import { badRequest, forbidden, HearthError } from '../errors.ts';
import { MAX_SUBSCRIPTIONS } from './constants.ts';

export interface ObserveDeps {
  /** whether this node holds the group (a namespace id is its root group) */
  groupKnown(groupId: string): boolean;
  /** The application of a context this node holds, null when it holds none by that id. */
  contextApplication?: (contextId: string) => Promise<string | null>;
  /** a group's way up to its namespace root: group-bound keys observe open subgroups too */
  groupPath?: MayActOptions['groupPath'];
}

export interface IdSets {
  contexts: string[];
  groups: string[];
}

/** A list of ids from a request (`undefined`/`null` = none), each as 64 lowercase hex; else 400. */
export function parseIdList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badRequest(`Invalid request: ${field} must be an array of ids`);
  if (value.length > MAX_SUBSCRIPTIONS) throw badRequest(`Invalid request: ${field} has more than ${MAX_SUBSCRIPTIONS} ids`);
  const out: string[] = [];
  value.forEach((raw, i) => {
    const id = typeof raw === 'string' ? parseId(raw) : undefined; // never trimmed or cleaned into an id (issue #17 finding 3)
    if (!id) throw badRequest(`Invalid request: ${field}[${i}] is not an id (64 hex characters or base58 of 32 bytes)`);
    if (!out.includes(id)) out.push(id);
  });
  return out;
}

/** The `params` of a subscribe/unsubscribe request: `{contextIds?, groupIds?}`. */
export function parseIdSets(params: unknown): IdSets {
  if (params === undefined || params === null) return { contexts: [], groups: [] };
  if (typeof params !== 'object' || Array.isArray(params)) throw badRequest('Invalid request: params must be an object');
  const p = params as Record<string, unknown>;
  return { contexts: parseIdList(p.contextIds, 'params.contextIds'), groups: parseIdList(p.groupIds, 'params.groupIds') };
}

/** The subset of `wanted` this principal may observe; throws 403 for a bound key reaching outside. */
export async function observable(principal: Principal, wanted: IdSets, deps: ObserveDeps): Promise<IdSets> {
  const bound = isBound(principal.binding);
  const contexts: string[] = [];
  for (const id of wanted.contexts) {
    if (bound) {
      const app = principal.binding.applications.length > 0 && deps.contextApplication ? await deps.contextApplication(id) : null;
      if (!mayActOn(principal.binding, { kind: 'context', id }, { contextApplication: app })) {
        throw forbidden(`This client key is bound to other contexts or groups; it may not observe context ${id}`, 'permission_denied');
      }
    } else if (!satisfies(principal.permissions, `context:list[${id}]`) && !satisfies(principal.permissions, `context:execute[${id}]`)) {
      continue;
    }
    contexts.push(id);
  }
  const groups: string[] = [];
  for (const id of wanted.groups) {
    if (bound) {
      if (!mayActOn(principal.binding, { kind: 'group', id }, { groupPath: deps.groupPath })) {
        throw forbidden(`This client key is bound to other contexts or groups; it may not observe group ${id}`, 'permission_denied');
      }
    } else if (!satisfies(principal.permissions, `group:list[${id}]`) && !satisfies(principal.permissions, `namespace:list[${id}]`)) {
      continue;
    }
    if (deps.groupKnown(id)) groups.push(id);
  }
  return { contexts, groups };
}

/** A `contextApplication` from a lookup that throws `not_found` for contexts the node does not hold. */
export function contextApplicationVia(get: (contextId: string) => Promise<{ applicationId: string }>): (contextId: string) => Promise<string | null> {
  return (contextId) =>
    get(contextId).then(
      (c) => c.applicationId,
      (err: unknown) => {
        if (err instanceof HearthError && err.kind === 'not_found') return null;
        throw err;
      },
    );
}

/** Whether the principal may receive a group's admin-only frames (`CascadeProgress`). */
export function mayReceiveAdminFrames(principal: Principal, groupId: string): boolean {
  return satisfies(principal.permissions, `group:manage[${groupId}]`);
}
