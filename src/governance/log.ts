/**
 * The governance log (domain.md §4.1–§4.2): every mutation of a namespace is a signed op, applied
 * through its kind's applier to a draft of the state and persisted with that state in one atomic
 * batch; reads come from the derived state held in memory. Ops are applied one at a time per node.
 * Replication only has to ship ops and call `applyRemote` with each.
 */
import { createHash } from 'node:crypto';
import type { NodeIdentity } from '../accounts/identity.ts';
import { Serial } from '../auth/serial.ts';
import type { Clock } from '../clock.ts';
import { ed25519Verify } from '../crypto/keys.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import type { EventBus, NodeEvent } from '../events/bus.ts';
import { collect, type Store } from '../store/store.ts';
import type { ApplierRegistry } from './appliers.ts';
import { canonicalJson } from './canonical.ts';
import type { GovOp, GroupState, NamespaceState, UnsignedOp } from './types.ts';

const DOMAIN = 'hearth.governance.op.v1';

export function opIdOf(unsigned: UnsignedOp): string {
  return createHash('sha256').update(DOMAIN).update(canonicalJson(unsigned)).digest('hex');
}

const pad = (seq: string) => seq.padStart(20, '0');

export interface GovernanceDeps {
  store: Store;
  identity: NodeIdentity;
  clock: Clock;
  bus: EventBus;
  appliers: ApplierRegistry;
}

export class Governance {
  private readonly states = new Map<string, NamespaceState>();
  /** group id → namespace id */
  private readonly groupIndex = new Map<string, string>();
  private readonly serial = new Serial();
  private readonly stateSpace;
  private readonly opSpace;

  constructor(private readonly d: GovernanceDeps) {
    this.stateSpace = d.store.space<NamespaceState>('gov.state');
    this.opSpace = d.store.space<GovOp>('gov.ops');
  }

  async load(): Promise<void> {
    for (const [, ns] of await collect(this.stateSpace.entries())) this.remember(ns);
  }

  namespaces(): NamespaceState[] {
    return [...this.states.values()];
  }

  namespace(id: string): NamespaceState | undefined {
    return this.states.get(id);
  }

  /** The namespace holding a group (a namespace id is its root group's id). */
  locate(groupId: string): { ns: NamespaceState; group: GroupState } | undefined {
    const nsId = this.groupIndex.get(groupId);
    const ns = nsId ? this.states.get(nsId) : undefined;
    const group = ns?.groups[groupId];
    return ns && group ? { ns, group } : undefined;
  }

  requireGroup(groupId: string): { ns: NamespaceState; group: GroupState } {
    const found = this.locate(groupId);
    if (!found) throw notFound(`group '${groupId}' not found`);
    return found;
  }

  async ops(namespaceId: string): Promise<GovOp[]> {
    return (await collect(this.opSpace.entries({ prefix: `${namespaceId}/` }))).map(([, op]) => op);
  }

  /**
   * Authors an op as this node's account, applies it and persists op + state atomically.
   * `genesis` creates the namespace state the op applies to (namespace creation).
   */
  submit(
    namespaceId: string,
    groupId: string,
    kind: string,
    body: Record<string, unknown>,
    genesis?: NamespaceState,
  ): Promise<{ op: GovOp; ns: NamespaceState }> {
    return this.serial.run(async () => {
      const current = genesis ?? this.states.get(namespaceId);
      if (!current) throw notFound(`namespace '${namespaceId}' not found`);
      if (genesis && this.states.has(namespaceId)) throw conflict(`namespace '${namespaceId}' already exists`);
      const signer = this.d.identity.publicKey;
      const unsigned: UnsignedOp = {
        namespaceId,
        groupId,
        seq: (BigInt(current.seq) + 1n).toString(),
        parents: current.heads,
        signer,
        account: this.d.identity.accountId,
        nonce: (BigInt(current.nonces[signer] ?? '0') + 1n).toString(),
        kind,
        body,
        timestampMs: this.d.clock.now(),
      };
      const id = opIdOf(unsigned);
      const op: GovOp = { ...unsigned, id, signature: this.d.identity.sign(Buffer.from(id, 'hex')) };
      return this.applyAndPersist(current, op);
    });
  }

  /** Applies an op authored elsewhere (replication): signature, position and nonce are checked. */
  applyRemote(op: GovOp): Promise<{ op: GovOp; ns: NamespaceState }> {
    return this.serial.run(async () => {
      const ns = this.states.get(op.namespaceId);
      if (!ns) throw notFound(`namespace '${op.namespaceId}' not found`);
      const { id, signature, ...unsigned } = op;
      if (opIdOf(unsigned) !== id) throw badRequest('governance op id does not match its content');
      if (!ed25519Verify(op.signer, Buffer.from(id, 'hex'), Buffer.from(signature, 'hex'))) {
        throw badRequest('governance op signature is invalid');
      }
      if (BigInt(op.seq) !== BigInt(ns.seq) + 1n) throw conflict(`governance op out of order: expected seq ${BigInt(ns.seq) + 1n}`);
      if (BigInt(op.nonce) <= BigInt(ns.nonces[op.signer] ?? '0')) throw conflict('governance op nonce already used');
      return this.applyAndPersist(ns, op);
    });
  }

  /** Forgets a namespace on this node: its state and ops go in one batch. */
  drop(namespaceId: string): Promise<void> {
    return this.serial.run(async () => {
      const ops = await collect(this.opSpace.entries({ prefix: `${namespaceId}/` }));
      await this.d.store.batch([this.stateSpace.delOp(namespaceId), ...ops.map(([k]) => this.opSpace.delOp(k))]);
      const ns = this.states.get(namespaceId);
      for (const g of Object.keys(ns?.groups ?? {})) this.groupIndex.delete(g);
      this.states.delete(namespaceId);
    });
  }

  private async applyAndPersist(current: NamespaceState, op: GovOp): Promise<{ op: GovOp; ns: NamespaceState }> {
    const draft = structuredClone(current);
    const events: NodeEvent[] = [];
    this.d.appliers.get(op.kind)({
      ns: draft,
      op,
      emit: (groupId, kind, data) => events.push({ type: 'group', namespaceId: op.namespaceId, groupId, kind, data }),
    });
    draft.seq = op.seq;
    draft.heads = [op.id];
    draft.nonces[op.signer] = op.nonce;
    await this.d.store.batch([this.opSpace.putOp(`${op.namespaceId}/${pad(op.seq)}`, op), this.stateSpace.putOp(op.namespaceId, draft)]);
    this.forgetGroups(current);
    this.remember(draft);
    for (const e of events) this.d.bus.publish(e);
    return { op, ns: draft };
  }

  private remember(ns: NamespaceState): void {
    this.states.set(ns.id, ns);
    for (const g of Object.keys(ns.groups)) this.groupIndex.set(g, ns.id);
  }

  private forgetGroups(ns: NamespaceState): void {
    for (const g of Object.keys(ns.groups)) if (this.groupIndex.get(g) === ns.id) this.groupIndex.delete(g);
  }
}
