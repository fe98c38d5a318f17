/**
 * Folding one op into a namespace state (domain.md §4.2): the step every node repeats for every op
 * of a log, in the log's (seq, id) order (dag.ts). It must be a pure function of (state, op) — the
 * appliers read no clock, no randomness and no store — so that every node folding the same ops in
 * the same order reaches the same state. An op the fold refuses (its author lacked the authority at
 * that point, a conflict with an earlier op, a reused nonce) stays in the log without effect.
 */
import { notFound } from '../errors.ts';
import type { NodeEvent } from '../bus.ts';
import type { ApplierRegistry } from './appliers.ts';
import { emptyNamespace, type NamespaceGenesis } from './genesis.ts';
import { bindSigner } from './signers.ts';
import type { GovOp, NamespaceState } from './types.ts';
import { conflict } from '../errors.ts';

export type FoldOutcome = { ok: true; state: NamespaceState; events: NodeEvent[] } | { ok: false; error: unknown };

export const GENESIS_KIND = 'namespace.created';

export function foldOp(appliers: ApplierRegistry, current: NamespaceState, op: GovOp): FoldOutcome {
  const draft = structuredClone(current);
  const events: NodeEvent[] = [];
  try {
    if (draft.deletedAt !== undefined) throw notFound(`namespace '${draft.id}' not found (deleted)`);
    if (BigInt(op.nonce) <= BigInt(draft.nonces[op.signer] ?? '0')) throw conflict('governance op nonce already used');
    bindSigner(draft, op);
    appliers.get(op.kind)({
      ns: draft,
      op,
      emit: (groupId, kind, data) => events.push({ type: 'group', namespaceId: op.namespaceId, groupId, kind, data }),
    });
    draft.nonces[op.signer] = op.nonce;
  } catch (error) {
    return { ok: false, error };
  }
  return { ok: true, state: draft, events };
}

/** The empty state a namespace's genesis op folds into, derived from the op alone. */
export function genesisState(op: GovOp): NamespaceState {
  return emptyNamespace(op.namespaceId, op.account, op.body as unknown as NamespaceGenesis, Math.floor(op.timestampMs / 1000));
}

export const isGenesis = (op: GovOp): boolean => op.kind === GENESIS_KIND && op.parents.length === 0;

/** A refusal's message, for logs and ingest results. */
export const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
