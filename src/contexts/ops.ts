/**
 * Governance ops that register contexts in groups (admin-wire-a §4.3 "a `ContextRegistered` group
 * op is published"; admin-wire-b §11: create context needs admin or `CAN_CREATE_CONTEXT`). The
 * group's `contexts` map is what `GET /groups/{g}/contexts`, `contextCount` and the membership
 * checks of the contexts routes read. Appliers check the author against the draft state; a refusal
 * persists nothing.
 */
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import {
  type ApplierRegistry,
  type ApplyContext,
  groupOf,
  type GroupState,
  isAdmin,
  type NamespaceState,
  requireCapability,
} from '../governance/index.ts';

export const CONTEXT_OPS = {
  registered: 'context.registered',
  deregistered: 'context.deregistered',
} as const;

export interface ContextRegisteredBody {
  contextId: string;
  applicationId: string;
  name?: string;
  /** the bundle blob of the version the context was created with (hearth; older ops lack it) */
  bundleBlobId?: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The group of a namespace that has the context registered, if any. */
export function groupHoldingContext(ns: NamespaceState, contextId: string): GroupState | undefined {
  return Object.values(ns.groups).find((g) => g.contexts[contextId] !== undefined);
}

/** Admins pass; read-only roles may not create; others need CAN_CREATE_CONTEXT (admin-wire-b §8.2). */
export function requireMayCreateContext(ns: NamespaceState, group: GroupState, account: string): void {
  const role = group.members[account]?.role;
  if (role === 'ReadOnly' || role === 'ReadOnlyTee') {
    throw forbidden(`account ${account} is read-only in group '${group.id}' and may not create contexts`);
  }
  requireCapability(ns, group, account, 'CAN_CREATE_CONTEXT');
}

function registered({ ns, op }: ApplyContext): void {
  const body = op.body as unknown as ContextRegisteredBody;
  if (typeof body.contextId !== 'string' || !HEX64.test(body.contextId)) throw badRequest('contextId must be 64 hex characters');
  if (typeof body.applicationId !== 'string' || !HEX64.test(body.applicationId)) throw badRequest('applicationId must be 64 hex characters');
  const group = groupOf(ns, op.groupId);
  requireMayCreateContext(ns, group, op.account);
  const holder = groupHoldingContext(ns, body.contextId);
  if (holder) throw conflict(`context '${body.contextId}' is already registered in group '${holder.id}'`);
  group.contexts[body.contextId] = {
    ...(typeof body.name === 'string' ? { name: body.name } : {}),
    metadata: null,
    registeredAt: op.timestampMs,
    // a hint for joiners: a malformed one is left out rather than refusing the registration
    ...(typeof body.bundleBlobId === 'string' && HEX64.test(body.bundleBlobId) ? { bundleBlobId: body.bundleBlobId } : {}),
  };
}

/** Deleting a context takes it out of its group: admins of the group only. */
function deregistered({ ns, op }: ApplyContext): void {
  const { contextId } = op.body as { contextId: string };
  const group = groupOf(ns, op.groupId);
  if (!group.contexts[contextId]) throw notFound(`context '${contextId}' is not registered in group '${group.id}'`);
  if (!isAdmin(group, op.account)) {
    throw forbidden(`only an admin of group '${group.id}' may delete its contexts; account ${op.account} is not one`);
  }
  delete group.contexts[contextId];
}

export function registerContextOps(registry: ApplierRegistry): void {
  registry.register(CONTEXT_OPS.registered, registered);
  registry.register(CONTEXT_OPS.deregistered, deregistered);
}
