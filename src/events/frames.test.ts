import { expect, it } from 'vitest';
import { resultJson, toWireEvent, topicOf } from './frames.ts';

const CTX = 'aa'.repeat(32);
const G = 'bb'.repeat(32);

it('renders context events as {contextId, type, data} without re-shaping data', () => {
  const data = { newRoot: 'cc'.repeat(32), events: [{ kind: 'Inserted', data: [123, 125], handler: null }] };
  const w = toWireEvent({ type: 'context', contextId: CTX, kind: 'StateMutation', data });
  expect(w).toEqual({ contextId: CTX, type: 'StateMutation', data });
  expect(JSON.parse(resultJson(w!))).toEqual({ result: { contextId: CTX, type: 'StateMutation', data } });
  expect(topicOf(w!)).toBe(`c:${CTX}`);
  expect(toWireEvent({ type: 'context', contextId: CTX, kind: 'SyncStatus', data: { syncState: { state: 'syncing' } } })?.type).toBe('SyncStatus');
});

it('does not send ExecutionEvent or unknown context kinds', () => {
  expect(toWireEvent({ type: 'context', contextId: CTX, kind: 'ExecutionEvent', data: {} })).toBeNull();
  expect(toWireEvent({ type: 'context', contextId: CTX, kind: 'Whatever', data: {} })).toBeNull();
});

it('renders membership and migration group events, RelayTee roles included, and drops internal kinds', () => {
  const w = toWireEvent({ type: 'group', namespaceId: G, groupId: G, kind: 'MemberAdded', data: { memberAccount: 'dd'.repeat(32), role: 'RelayTee' } });
  expect(w).toEqual({ groupId: G, type: 'MemberAdded', data: { memberAccount: 'dd'.repeat(32), role: 'RelayTee' } });
  expect(topicOf(w!)).toBe(`g:${G}`);
  expect(toWireEvent({ type: 'group', namespaceId: G, groupId: G, kind: 'MigrationProgress', data: { migrated: 1 } })?.type).toBe('MigrationProgress');
  expect(toWireEvent({ type: 'group', namespaceId: G, groupId: G, kind: 'GroupDeleted', data: {} })).toBeNull();
});

it('keeps u64 values exact in the frame JSON', () => {
  const w = toWireEvent({ type: 'group', namespaceId: G, groupId: G, kind: 'MigrationCompleted', data: { completedAt: 18446744073709551615n } });
  expect(resultJson(w!)).toContain('"completedAt":18446744073709551615');
});
