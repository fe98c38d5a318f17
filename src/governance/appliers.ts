/**
 * The registry of op appliers: one function per op kind that checks the author's authority against
 * the namespace state and applies the change to a draft. Each route family registers its own kinds
 * (other domains theirs, from the composition root); `log.ts` runs them. An applier throws a HearthError to refuse; nothing is then persisted.
 */
import { badRequest } from '../errors.ts';
import type { GovOp, NamespaceState } from './types.ts';

export interface ApplyContext {
  /** a draft of the namespace state: mutate it */
  ns: NamespaceState;
  op: GovOp;
  /** queue a group event (published on the bus after the op is persisted) */
  emit(groupId: string, kind: string, data: Record<string, unknown>): void;
}

export type Applier = (ctx: ApplyContext) => void;

/** A domain's op kinds, registered with the governance registry (the composition root calls each: src/node/ops.ts). */
export type OpRegistration = (registry: ApplierRegistry) => void;

export class ApplierRegistry {
  private readonly appliers = new Map<string, Applier>();

  register(kind: string, applier: Applier): void {
    if (this.appliers.has(kind)) throw new Error(`governance op kind registered twice: ${kind}`);
    this.appliers.set(kind, applier);
  }

  get(kind: string): Applier {
    const a = this.appliers.get(kind);
    if (!a) throw badRequest(`unknown governance op kind: ${kind}`);
    return a;
  }
}
