/**
 * Which bus events become stream frames, and their wire shape (admin spec "Events" rules 2–6;
 * admin-wire-a §8.4; admin-wire-b §10). Pure: no I/O.
 *
 * The publishing contract (what domains put on the `EventBus`, rendered here without re-shaping):
 *
 * - Context events: `{type:'context', contextId:<hex64>, kind, data}` with
 *   - `StateMutation`: `data = {newRoot:<hex64>, events:[{kind, data:<number[]>, handler:<string|null>}]}`;
 *   - `SyncStatus`: `data = {syncState:{state:'idle'|'waitingForPeers'|'syncing'|'receivingSnapshot'|'backingOff', …}, failureCount, lastError?}`;
 *   - `Ephemeral` (presence.ts): `data = {author, state:<number[]>}` live, `{author, removed:true}` on expiry;
 *   - `AppVersionChanged`, `XCall` as the reference shapes them.
 *   `ExecutionEvent` and any other kind are not sent (spec rule 3).
 * - Group events (governance appliers): `{type:'group', namespaceId, groupId, kind, data}` with
 *   - `MemberJoined` / `MemberAdded`: `data = {memberAccount, role?}` (role may be `RelayTee`);
 *   - `MemberRemoved`: `data = {memberAccount}`;
 *   - `MigrationStarted` / `MigrationProgress` / `MigrationCompleted` (every subscriber of the
 *     group) and `CascadeProgress` (group admins only), keyed on the namespace root.
 *   Other governance kinds (e.g. `GroupDeleted`) are internal and not sent.
 *
 * A frame's payload is `{"result": {contextId | groupId, type, data}}`, one compact JSON line.
 */
import type { NodeEvent } from '../bus.ts';
import { stringifyExact } from '../http/json.ts';

export const CONTEXT_KINDS: ReadonlySet<string> = new Set(['StateMutation', 'SyncStatus', 'Ephemeral', 'AppVersionChanged', 'XCall']);
export const GROUP_KINDS: ReadonlySet<string> = new Set([
  'MemberJoined',
  'MemberAdded',
  'MemberRemoved',
  'MigrationStarted',
  'MigrationProgress',
  'CascadeProgress',
  'MigrationCompleted',
]);
/** Group kinds only the group's admins receive (admin-wire-b §10.4). */
export const ADMIN_ONLY_GROUP_KINDS: ReadonlySet<string> = new Set(['CascadeProgress']);

export type WireEvent =
  | { contextId: string; type: string; data: Record<string, unknown> }
  | { groupId: string; type: string; data: Record<string, unknown> };

/** The wire form of a bus event, or null when the event is not sent on the stream. */
export function toWireEvent(event: NodeEvent): WireEvent | null {
  if (event.type === 'context') {
    if (!CONTEXT_KINDS.has(event.kind)) return null;
    return { contextId: event.contextId, type: event.kind, data: event.data };
  }
  if (!GROUP_KINDS.has(event.kind)) return null;
  return { groupId: event.groupId, type: event.kind, data: event.data };
}

/** Subscription keys: `c:<context>` and `g:<group>`, ids as 64 lowercase hex. */
export const contextTopic = (id: string): string => `c:${id.toLowerCase()}`;
export const groupTopic = (id: string): string => `g:${id.toLowerCase()}`;

/** The subscription key a wire event is delivered under. */
export function topicOf(event: WireEvent): string {
  return 'contextId' in event ? contextTopic(event.contextId) : groupTopic(event.groupId);
}

/** `{"result": …}`: the SSE `data:` payload and the body of a WebSocket push. One line. */
export function resultJson(event: WireEvent): string {
  return stringifyExact({ result: event });
}

/** The SSE connect frame payload (admin-wire-a §8.1). */
export function connectJson(sessionId: string, reconnect: boolean): string {
  return JSON.stringify({ type: 'connect', session_id: sessionId, reconnect });
}

/** Why frames are missing after a resume: the buffer moved on, or the session is gone. */
export type GapReason = 'buffer_exceeded' | 'session_unknown';

/**
 * The explicit gap frame (ours; docs/events.md): the client asked to resume after `lastEventId`
 * but frames up to `resumedAfter` are lost (`missed` of them when known). It has no `result`, so
 * clients that only read `result` frames ignore it, as they ignore the connect frame.
 */
export function gapJson(g: { lastEventId: string; resumedAfter: string; missed: number | null; reason: GapReason }): string {
  return JSON.stringify({ type: 'gap', reason: g.reason, lastEventId: g.lastEventId, resumedAfter: g.resumedAfter, missed: g.missed });
}

/** The last frame of a connection the node closes (the reference's `{type:"close", reason}`). */
export function closeJson(reason: string): string {
  return JSON.stringify({ type: 'close', reason });
}
