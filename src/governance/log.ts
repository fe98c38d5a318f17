/**
 * The governance log (domain.md §4.1–§4.2): every mutation of a namespace is a signed op; the
 * namespace's state is the fold (fold.ts) of its ops in (seq, id) order over their DAG (dag.ts),
 * persisted with the ops in one atomic batch per change, and read from memory.
 *
 * Ops come from two places. `submit` authors one here: its parents are the current heads, so it
 * sorts after every known op and folds onto the current state; an op its applier refuses is an
 * error to the caller and is not kept. `ingest` takes ops authored elsewhere (replication): each is
 * checked on its own (id, signature, seq against its parents) and stored once its parents are
 * known; when one sorts before ops already folded (a concurrent op), the namespace is re-folded
 * from its genesis, so every node reaches the same state whatever order ops arrived in. Changes are
 * serialised per node; listeners hear of every stored op (the replicator publishes local ones).
 */
import { createHash } from 'node:crypto';
import type { NodeIdentity } from '../identity/identity.ts';
import { Serial } from '../serial.ts';
import type { Clock } from '../clock.ts';
import { ed25519Verify } from '../crypto/keys.ts';
import { conflict, notFound } from '../errors.ts';
import type { EventBus, NodeEvent } from '../bus.ts';
import { collect, type Store } from '../store/store.ts';
import type { ApplierRegistry } from './appliers.ts';
import { canonicalJson } from './canonical.ts';
import { OpDag, orderKey } from './dag.ts';
import { foldOp, genesisState, GENESIS_KIND, isGenesis, reasonOf } from './fold.ts';
import { speaksFor } from './signers.ts';
import type { GovOp, GroupState, NamespaceState, UnsignedOp } from './types.ts';

const DOMAIN = 'hearth.governance.op.v1';

export function opIdOf(unsigned: UnsignedOp): string {
  return createHash('sha256').update(DOMAIN).update(canonicalJson(unsigned)).digest('hex');
}

/** Why an op cannot be taken whatever the state (id or signature wrong), or undefined. */
export function opDefect(op: GovOp): string | undefined {
  const { id, signature, ...unsigned } = op;
  if (opIdOf(unsigned) !== id) return 'op id does not match its content';
  if (!ed25519Verify(op.signer, Buffer.from(id, 'hex'), Buffer.from(signature, 'hex'))) return 'op signature is invalid';
  return undefined;
}

/**
 * Why a stored op cannot stay in the log (see `load`), or undefined. `dag` holds the ops kept so far
 * (every earlier op in fold order).
 */
function storedOpDefect(nsId: string, key: string, op: GovOp | undefined, dag: OpDag): string | undefined {
  if (typeof op !== 'object' || op === null) return 'not an op';
  if (op.namespaceId !== nsId) return `op belongs to namespace '${String(op.namespaceId)}'`;
  let seq: bigint;
  try {
    seq = BigInt(op.seq);
  } catch {
    return 'op seq is not a number';
  }
  if (!Array.isArray(op.parents) || typeof op.id !== 'string') return 'op is malformed';
  let defect: string | undefined;
  try {
    defect = opDefect(op);
  } catch {
    defect = 'op signature is invalid';
  }
  if (defect) return defect;
  if (key !== `${nsId}/${orderKey(seq, op.id)}`) return 'op is stored under a key that does not match it';
  if (dag.size === 0) return isGenesis(op) ? undefined : 'the log does not start with its genesis op';
  if (op.parents.length === 0) return 'a second genesis op for a namespace that has one';
  if (dag.missing(op.parents).length > 0) return 'a parent is missing (dropped, or never stored)';
  if (seq !== dag.expectedSeq(op.parents)) return `op seq ${op.seq} does not follow its parents`;
  return undefined;
}

/** What `Governance.load` dropped or re-derived while re-verifying the stored log. */
export interface VerifyReport {
  droppedOps: { namespaceId: string; opId: string; reason: string }[];
  /** namespaces whose genesis op failed (or that had no op): state and ops deleted */
  droppedNamespaces: string[];
  /** namespaces whose stored state differed from the fold of their verified ops */
  rederived: string[];
}

export interface GovernanceDeps {
  store: Store;
  identity: NodeIdentity;
  clock: Clock;
  bus: EventBus;
  appliers: ApplierRegistry;
}

export interface IngestOptions {
  /** a namespace this node does not hold may start from its genesis op (a join's or a pull's answer) */
  allowGenesis?: boolean;
}

export interface IngestResult {
  /** ops newly stored, in fold order */
  added: GovOp[];
  /** of `added`, those the fold gave no effect, with why */
  rejected: { op: GovOp; reason: string }[];
  /** ops held back because a parent is unknown here */
  waiting: GovOp[];
  /** the unknown parents */
  missing: string[];
  /** ops refused whatever the state (bad id, signature, seq, namespace), with why */
  refused: { op: GovOp; reason: string }[];
}

export interface OpsApplied {
  namespaceId: string;
  ops: GovOp[];
  /** authored by this node (`submit`) rather than received */
  local: boolean;
}

interface Held {
  state: NamespaceState;
  dag: OpDag;
  /** order key of the last op folded into `state` */
  last: string;
}

const byOrder = (a: GovOp, b: GovOp): number => {
  const ka = orderKey(BigInt(a.seq), a.id);
  const kb = orderKey(BigInt(b.seq), b.id);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

export class Governance {
  private readonly held = new Map<string, Held>();
  /** group id → namespace id, for live namespaces */
  private readonly groupIndex = new Map<string, string>();
  private readonly serial = new Serial();
  private readonly listeners = new Set<(e: OpsApplied) => void>();
  private readonly stateSpace;
  private readonly opSpace;

  constructor(private readonly d: GovernanceDeps) {
    this.stateSpace = d.store.space<NamespaceState>('gov.state');
    this.opSpace = d.store.space<GovOp>('gov.ops');
  }

  /**
   * Loads every namespace the store holds, re-verifying it first (issue #23 section 6): a node
   * restarted on honest code must not keep a view forged by the code it ran before. Each stored op
   * is checked as `ingest` checks one (stored under its own key, id, signature, namespace, genesis
   * first, parents present, seq following them); an op that fails is deleted, and so is every op
   * that descends from it. The state is then re-derived by folding the remaining ops from genesis,
   * so ops without authority at their point in the log have no effect, whatever the stored state
   * said; a namespace whose genesis fails is dropped. Changes are written in one batch per
   * namespace; the report says what was dropped or re-derived (the caller logs it once).
   */
  async load(): Promise<VerifyReport> {
    const report: VerifyReport = { droppedOps: [], droppedNamespaces: [], rederived: [] };
    for (const [key, state] of await collect(this.stateSpace.entries())) {
      const held = await this.verifyStored(key, state, report);
      if (held) this.remember(held);
    }
    return report;
  }

  private async verifyStored(stateKey: string, stored: NamespaceState, report: VerifyReport): Promise<Held | undefined> {
    const nsId = stateKey;
    const dag = new OpDag();
    const drop: string[] = [];
    let state: NamespaceState | undefined;
    let last = '';
    for (const [key, op] of await collect(this.opSpace.entries({ prefix: `${nsId}/` }))) {
      const reason = storedOpDefect(nsId, key, op, dag);
      if (reason) {
        drop.push(key);
        report.droppedOps.push({ namespaceId: nsId, opId: typeof op?.id === 'string' ? op.id : key, reason });
        continue;
      }
      dag.add(op.id, BigInt(op.seq), op.parents);
      state ??= genesisState(op);
      const out = foldOp(this.d.appliers, state, op);
      if (out.ok) state = out.state;
      last = key.slice(nsId.length + 1); // keys iterate in fold order
    }
    if (state === undefined || stored?.id !== nsId) {
      await this.d.store.batch([...drop.map((k) => this.opSpace.delOp(k)), this.stateSpace.delOp(stateKey)]);
      report.droppedNamespaces.push(nsId);
      return undefined;
    }
    const verified = this.withDag(state, dag);
    const changed = canonicalJson(verified) !== canonicalJson(stored);
    if (changed) report.rederived.push(nsId);
    if (changed || drop.length > 0) await this.d.store.batch([...drop.map((k) => this.opSpace.delOp(k)), this.stateSpace.putOp(nsId, verified)]);
    return { state: verified, dag, last };
  }

  /** Hears of every op stored (local and received), after it is persisted. */
  onOps(listener: (e: OpsApplied) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Live namespaces (a deleted one is kept as a tombstone but not listed). */
  namespaces(): NamespaceState[] {
    return [...this.held.values()].filter((h) => h.state.deletedAt === undefined).map((h) => h.state);
  }

  namespace(id: string): NamespaceState | undefined {
    const state = this.held.get(id)?.state;
    return state && state.deletedAt === undefined ? state : undefined;
  }

  /** Every namespace this node holds a log of, deleted ones included (replication serves their tombstones). */
  knownNamespaces(): string[] {
    return [...this.held.keys()];
  }

  /** The state of a namespace, deleted ones included. */
  stateOf(namespaceId: string): NamespaceState | undefined {
    return this.held.get(namespaceId)?.state;
  }

  /** The namespace holding a group (a namespace id is its root group's id). */
  locate(groupId: string): { ns: NamespaceState; group: GroupState } | undefined {
    const nsId = this.groupIndex.get(groupId);
    const ns = nsId ? this.namespace(nsId) : undefined;
    const group = ns?.groups[groupId];
    return ns && group ? { ns, group } : undefined;
  }

  requireGroup(groupId: string): { ns: NamespaceState; group: GroupState } {
    const found = this.locate(groupId);
    if (!found) throw notFound(`group '${groupId}' not found`);
    return found;
  }

  /** The log's heads (empty for an unknown namespace). */
  heads(namespaceId: string): string[] {
    return this.held.get(namespaceId)?.dag.heads() ?? [];
  }

  /**
   * The heads, their nearest ancestors and a few further back, at most `limit` ids (dag.ts
   * `reachingFrontier`): what a pull names, so a peer that has not seen our newest ops still finds
   * ids it knows and sends only what we lack, not the whole log (empty for an unknown namespace).
   */
  frontier(namespaceId: string, limit: number): string[] {
    const dag = this.held.get(namespaceId)?.dag;
    return dag ? dag.reachingFrontier(dag.heads(), limit) : [];
  }

  knows(namespaceId: string, opId: string): boolean {
    return this.held.get(namespaceId)?.dag.has(opId) ?? false;
  }

  opCount(namespaceId: string): number {
    return this.held.get(namespaceId)?.dag.size ?? 0;
  }

  /** Every op of a namespace, in fold order. */
  async ops(namespaceId: string): Promise<GovOp[]> {
    return (await collect(this.opSpace.entries({ prefix: `${namespaceId}/` }))).map(([, op]) => op).sort(byOrder);
  }

  /** The ops a holder of `theirHeads` lacks, in fold order (at most `limit`). */
  async lacking(namespaceId: string, theirHeads: readonly string[], limit = Number.MAX_SAFE_INTEGER): Promise<GovOp[]> {
    const h = this.held.get(namespaceId);
    if (!h) return [];
    const out: GovOp[] = [];
    for (const id of h.dag.lacking(theirHeads).slice(0, limit)) {
      const op = await this.opSpace.get(`${namespaceId}/${orderKey(h.dag.seqOf(id)!, id)}`);
      if (op) out.push(op);
    }
    return out;
  }

  /** Founds a namespace: its genesis op, authored here. */
  submitGenesis(namespaceId: string, body: Record<string, unknown>): Promise<{ op: GovOp; ns: NamespaceState }> {
    return this.serial.run(async () => {
      if (this.held.has(namespaceId)) throw conflict(`namespace '${namespaceId}' already exists`);
      const op = this.author(namespaceId, namespaceId, GENESIS_KIND, body, new OpDag(), undefined);
      return this.commitLocal({ state: genesisState(op), dag: new OpDag(), last: '' }, op);
    });
  }

  /** Authors an op as this node's account, folds it and persists op + state atomically. */
  submit(namespaceId: string, groupId: string, kind: string, body: Record<string, unknown>): Promise<{ op: GovOp; ns: NamespaceState }> {
    return this.serial.run(async () => {
      const h = this.held.get(namespaceId);
      if (!h || h.state.deletedAt !== undefined) throw notFound(`namespace '${namespaceId}' not found`);
      return this.commitLocal(h, this.author(namespaceId, groupId, kind, body, h.dag, h.state));
    });
  }

  /** Takes ops authored elsewhere (see the module header). Never throws for a bad op: it reports it. */
  ingest(namespaceId: string, incoming: readonly GovOp[], opts: IngestOptions = {}): Promise<IngestResult> {
    return this.serial.run(() => this.ingestNow(namespaceId, incoming, opts));
  }

  private author(namespaceId: string, groupId: string, kind: string, body: Record<string, unknown>, dag: OpDag, state: NamespaceState | undefined): GovOp {
    const { identity } = this.d;
    const signer = identity.publicKey;
    const bound = state !== undefined && speaksFor(state, signer, identity.accountId);
    const unsigned: UnsignedOp = {
      namespaceId,
      groupId,
      seq: dag.nextSeq().toString(),
      parents: dag.heads(),
      signer,
      account: identity.accountId,
      nonce: (BigInt(state?.nonces[signer] ?? '0') + 1n).toString(),
      kind,
      body,
      timestampMs: this.d.clock.now(),
      ...(bound ? {} : { credential: identity.credential }),
    };
    const id = opIdOf(unsigned);
    return { ...unsigned, id, signature: identity.sign(Buffer.from(id, 'hex')) };
  }

  private async commitLocal(h: Held, op: GovOp): Promise<{ op: GovOp; ns: NamespaceState }> {
    const out = foldOp(this.d.appliers, h.state, op);
    if (!out.ok) throw out.error;
    const dag = h.dag;
    dag.add(op.id, BigInt(op.seq), op.parents);
    const next: Held = { state: this.withDag(out.state, dag), dag, last: orderKey(BigInt(op.seq), op.id) };
    await this.persist(next, [op]);
    this.remember(next, h);
    this.announce(out.events, { namespaceId: op.namespaceId, ops: [op], local: true });
    return { op, ns: next.state };
  }

  private async ingestNow(namespaceId: string, incoming: readonly GovOp[], opts: IngestOptions): Promise<IngestResult> {
    const result: IngestResult = { added: [], rejected: [], waiting: [], missing: [], refused: [] };
    let h = this.held.get(namespaceId);
    const fresh: GovOp[] = [];
    const pending = [...incoming].sort(byOrder);
    for (const op of pending) {
      if (h?.dag.has(op.id)) continue; // known, or an earlier copy in this batch was taken
      const refuse = (reason: string) => result.refused.push({ op, reason });
      if (op.namespaceId !== namespaceId) {
        refuse(`op belongs to namespace '${op.namespaceId}'`);
        continue;
      }
      const defect = opDefect(op);
      if (defect) {
        refuse(defect);
        continue;
      }
      if (!h) {
        if (!opts.allowGenesis || !isGenesis(op)) {
          result.waiting.push(op);
          continue;
        }
        h = { state: genesisState(op), dag: new OpDag(), last: '' };
      }
      const missing = h.dag.missing(op.parents);
      if (missing.length > 0) {
        result.waiting.push(op);
        for (const m of missing) if (!result.missing.includes(m)) result.missing.push(m);
        continue;
      }
      if (op.parents.length === 0 && h.dag.size > 0) {
        refuse('a second genesis op for a namespace that has one');
        continue;
      }
      if (BigInt(op.seq) !== h.dag.expectedSeq(op.parents)) {
        refuse(`op seq ${op.seq} does not follow its parents`);
        continue;
      }
      h.dag.add(op.id, BigInt(op.seq), op.parents);
      fresh.push(op);
    }
    if (!h || fresh.length === 0) return result;
    result.added = fresh;
    try {
      await this.foldIn(h, fresh, result);
    } catch (e) {
      await this.reload(namespaceId); // the DAG took ops that were not persisted: start again from disk
      throw e;
    }
    return result;
  }

  /** Folds freshly stored ops: onto the current state when they all sort last, else from genesis. */
  private async foldIn(h: Held, fresh: GovOp[], result: IngestResult): Promise<void> {
    const prev = this.held.get(h.state.id);
    const events: NodeEvent[] = [];
    const freshIds = new Set(fresh.map((o) => o.id));
    const inOrder = prev !== undefined && orderKey(BigInt(fresh[0]!.seq), fresh[0]!.id) > prev.last;
    let state: NamespaceState;
    let ops: GovOp[];
    if (inOrder) {
      state = prev.state;
      ops = fresh;
    } else {
      const stored = prev ? await this.ops(h.state.id) : [];
      ops = [...stored, ...fresh].sort(byOrder);
      state = genesisState(ops[0]!);
    }
    for (const op of ops) {
      const out = foldOp(this.d.appliers, state, op);
      if (out.ok) {
        state = out.state;
        if (freshIds.has(op.id)) events.push(...out.events);
      } else if (freshIds.has(op.id)) {
        result.rejected.push({ op, reason: reasonOf(out.error) });
      }
    }
    const last = fresh.map((o) => orderKey(BigInt(o.seq), o.id)).reduce((a, b) => (a > b ? a : b), prev?.last ?? '');
    const next: Held = { state: this.withDag(state, h.dag), dag: h.dag, last };
    await this.persist(next, fresh);
    this.remember(next, prev);
    this.announce(events, { namespaceId: h.state.id, ops: fresh, local: false });
  }

  private withDag(state: NamespaceState, dag: OpDag): NamespaceState {
    return { ...state, heads: dag.heads(), seq: dag.highestSeq().toString() };
  }

  private async persist(h: Held, ops: GovOp[]): Promise<void> {
    await this.d.store.batch([
      ...ops.map((op) => this.opSpace.putOp(`${op.namespaceId}/${orderKey(BigInt(op.seq), op.id)}`, op)),
      this.stateSpace.putOp(h.state.id, h.state),
    ]);
  }

  private async reload(namespaceId: string): Promise<void> {
    const prev = this.held.get(namespaceId);
    if (prev) this.forgetGroups(prev.state);
    this.held.delete(namespaceId);
    const state = await this.stateSpace.get(namespaceId);
    if (state) this.remember(await this.loadHeld(state));
  }

  private async loadHeld(state: NamespaceState): Promise<Held> {
    const dag = new OpDag();
    let last = '';
    for await (const [key, op] of this.opSpace.entries({ prefix: `${state.id}/` })) {
      dag.add(op.id, BigInt(op.seq), op.parents);
      last = key.slice(state.id.length + 1); // keys iterate in fold order
    }
    return { state, dag, last };
  }

  private announce(events: NodeEvent[], applied: OpsApplied): void {
    for (const e of events) this.d.bus.publish(e);
    for (const l of this.listeners) l(applied);
  }

  private remember(h: Held, prev?: Held): void {
    if (prev) this.forgetGroups(prev.state);
    this.held.set(h.state.id, h);
    if (h.state.deletedAt !== undefined) return;
    for (const g of Object.keys(h.state.groups)) this.groupIndex.set(g, h.state.id);
  }

  private forgetGroups(ns: NamespaceState): void {
    for (const g of Object.keys(ns.groups)) if (this.groupIndex.get(g) === ns.id) this.groupIndex.delete(g);
  }
}
