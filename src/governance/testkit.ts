/**
 * Applying governance ops in unit tests as a replaying node does: straight through the applier
 * registry onto a copy of the state, without a log, a store or signatures.
 */
import { HearthError } from '../errors.ts';
import { createAppliers } from './ops.ts';
import type { GovOp, NamespaceState } from './types.ts';

const registry = createAppliers();

/** The state after `kind` applies; `op` overrides the envelope (author account, signer, id, time). */
export function applyOp(ns: NamespaceState, groupId: string, kind: string, body: Record<string, unknown>, op: Partial<GovOp> = {}): NamespaceState {
  const draft = structuredClone(ns);
  const envelope: GovOp = { namespaceId: ns.id, groupId, kind, body, account: '', signer: '', timestampMs: 7_000, seq: '1', parents: [], nonce: '1', id: 'f'.repeat(64), signature: '', ...op };
  registry.get(kind)({ ns: draft, op: envelope, emit: () => undefined });
  return draft;
}

/** `ok`, or `<kind>: <message>` of the HearthError the call threw (anything else is rethrown). */
export function refusalOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof HearthError) return `${e.kind}: ${e.message}`;
    throw e;
  }
  return 'ok';
}
