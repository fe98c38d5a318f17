/**
 * Nodes for context sync tests, in one process over a MemoryHub: real governance (with its
 * replication), real contexts, real group keys and context sync, and a scripted guest that merges
 * the way an application built for the reference does (`MergingRuntime`): per-key last-writer-wins
 * with a stamp, the merge metadata kept in replicated state, the root a pure function of that state.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import pino from 'pino';
import { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import { AutoFollow, type Contexts, createContexts, registerContextOps } from '../contexts/index.ts';
import { FakeCatalog } from '../contexts/testkit.ts';
import { EventBus, type NodeEvent } from '../bus.ts';
import { createAppliers, Governance, GovernanceReplicator, InvitationService, MembersService, NamespaceService } from '../governance/index.ts';
import { type MemoryHub, type MemoryNetwork, StreamRouter } from '../network/index.ts';
import type { CallRequest, CallResult, Runtime, Writes } from '../runtime/index.ts';
import { MemoryStore } from '../store/memory.ts';
import { registerUpgradeOps } from '../upgrades/index.ts';
import { GroupKeys, registerKeyOps } from './keys.ts';
import { ContextSync, type SyncOptions } from './service.ts';
import { SpecializedInvites } from './specialized.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const sha = (s: string) => new Uint8Array(createHash('sha256').update(s).digest());
const KEYS_ROW = sha('merging:keys');
const rowOf = (key: string) => sha(`merging:entry:${key}`);

interface Entry {
  value: string | null;
  /** [counter, writer]: compared as a pair, the value last */
  stamp: [number, string];
}

const newer = (a: Entry, b: Entry | undefined): boolean => {
  if (!b) return true;
  if (a.stamp[0] !== b.stamp[0]) return a.stamp[0] > b.stamp[0];
  if (a.stamp[1] !== b.stamp[1]) return a.stamp[1] > b.stamp[1];
  return (a.value ?? '') > (b.value ?? '');
};

/**
 * `init`; `set {key, value}` and `remove {key}` (event `Inserted`/`Removed`, artifact = the op with
 * its stamp); `get {key}`, `entries` (reads); `__calimero_sync_next` merges an artifact; a key
 * named `__trap` makes the merge panic; a key named `__transient` with value N makes the merge of
 * that op miss its deadline the first N times on this runtime (`always`: every time).
 */
export class MergingRuntime implements Runtime {
  /** failed merges of `__transient` ops so far, by op */
  private readonly transientFailures = new Map<string, number>();

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  async call(req: CallRequest): Promise<CallResult> {
    const base = { logs: [], xcalls: [], privateWrites: [] as Writes, indexWrites: [] as Writes, events: [] as { kind: string; data: Uint8Array; handler: string | null }[] };
    const keysRaw = await req.state.get(KEYS_ROW);
    const keys: string[] = keysRaw ? JSON.parse(dec(keysRaw)) : [];
    const read = async (k: string): Promise<Entry | undefined> => {
      const v = await req.state.get(rowOf(k));
      return v ? (JSON.parse(dec(v)) as Entry) : undefined;
    };
    const commit = async (changed: Map<string, Entry>, artifact: Uint8Array): Promise<CallResult> => {
      const all = new Set([...keys, ...changed.keys()]);
      const writes: Writes = [[KEYS_ROW, enc(JSON.stringify([...all].sort()))]];
      for (const [k, e] of changed) writes.push([rowOf(k), enc(JSON.stringify(e))]);
      const live: string[] = [];
      for (const k of [...all].sort()) {
        const e = changed.get(k) ?? (await read(k));
        if (e && e.value !== null) live.push(`${k}=${e.value}`);
      }
      return { ok: true, output: null, ...base, writes, commit: { rootHash: sha(live.join(';')), artifact } };
    };
    const args = req.input.length > 0 && req.method !== '__calimero_sync_next' ? (JSON.parse(dec(req.input)) as Record<string, string>) : {};
    const writer = Buffer.from(req.deviceId).toString('hex');
    switch (req.method) {
      case 'init':
        if (keysRaw) return { ok: false, kind: 'Panic', message: 'guest panicked: Cannot initialize over already existing state.', logs: [] };
        return commit(new Map(), enc(JSON.stringify({ ops: [] })));
      case 'set':
      case 'remove': {
        const prev = await read(args.key!);
        const e: Entry = { value: req.method === 'set' ? args.value! : null, stamp: [(prev?.stamp[0] ?? 0) + 1, writer] };
        const out = await commit(new Map([[args.key!, e]]), enc(JSON.stringify({ ops: [{ key: args.key, ...e }] })));
        if (out.ok) out.events.push({ kind: req.method === 'set' ? 'Inserted' : 'Removed', data: enc(JSON.stringify({ key: args.key, value: args.value })), handler: null });
        return out;
      }
      case 'get': {
        const e = await read(args.key!);
        return { ok: true, output: enc(JSON.stringify(e?.value ?? null)), ...base, writes: [], commit: null };
      }
      case 'entries': {
        const out: Record<string, string> = {};
        for (const k of keys) {
          const e = await read(k);
          if (e && e.value !== null) out[k] = e.value;
        }
        return { ok: true, output: enc(JSON.stringify(out)), ...base, writes: [], commit: null };
      }
      case '__calimero_sync_next': {
        const { ops } = JSON.parse(dec(req.input)) as { ops: (Entry & { key: string })[] };
        const changed = new Map<string, Entry>();
        for (const op of ops) {
          if (op.key === '__trap') return { ok: false, kind: 'Panic', message: 'guest panicked: cannot merge __trap', logs: [] };
          if (op.key === '__transient') {
            const id = JSON.stringify(op);
            const failed = this.transientFailures.get(id) ?? 0;
            if (op.value === 'always' || failed < Number(op.value)) {
              this.transientFailures.set(id, failed + 1);
              return { ok: false, kind: 'Deadline', message: 'execution exceeded its deadline of 10000 ms', logs: [] };
            }
          }
          const e: Entry = { value: op.value, stamp: op.stamp };
          if (newer(e, changed.get(op.key) ?? (await read(op.key)))) changed.set(op.key, e);
        }
        return commit(changed, enc(''));
      }
      default:
        return { ok: false, kind: 'MethodNotFound', message: `method "${req.method}" not found`, logs: [] };
    }
  }
}

export interface SyncNode extends Contexts {
  store: MemoryStore;
  identity: NodeIdentity;
  governance: Governance;
  namespaces: NamespaceService;
  members: MembersService;
  invitations: InvitationService;
  net: MemoryNetwork;
  sync: ContextSync;
  keys: GroupKeys;
  replicator: GovernanceReplicator;
  events: NodeEvent[];
  bus: EventBus;
  specialized: SpecializedInvites;
  /** auto-follow, when the node was made with it (`autoFollow` option) */
  autoFollow?: AutoFollow;
  /** moves this node's clock forward (it also ticks by 1 ms at every reading) */
  advanceClock(ms: number): void;
  /** stops every part (the store stays, for a restart) */
  stop(): Promise<void>;
}

/** A node on the hub (unlinked); `existing` restarts one over its store and identity. */
export async function syncNode(
  hub: MemoryHub,
  startMs: number,
  existing?: { store: MemoryStore; identity: NodeIdentity },
  specialized: { enabled: boolean; admitUnattested: boolean } = { enabled: false, admitUnattested: false },
  autoFollow?: { passLimit?: number; onPass?: ConstructorParameters<typeof AutoFollow>[0]['onPass'] },
  syncOptions: Partial<SyncOptions> = {},
): Promise<SyncNode> {
  const store = existing?.store ?? new MemoryStore();
  await store.open();
  let t = startMs;
  const clock: Clock = { now: () => ++t };
  const identity = existing?.identity ?? (await NodeIdentity.load(store, generateKeyPairSync('ed25519').privateKey, clock.now()));
  const logger = pino({ level: 'silent' });
  const bus = new EventBus();
  const events: NodeEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const governance = new Governance({ store, identity, clock, bus, appliers: createAppliers(registerContextOps, registerKeyOps, registerUpgradeOps) });
  await governance.load();
  const net = hub.join(identity.publicKey);
  const router = new StreamRouter(net);
  let invitations!: InvitationService;
  const replicator = new GovernanceReplicator({
    governance,
    network: net,
    router,
    clock,
    logger,
    options: { heartbeatMs: 50, requestTimeoutMs: 2_000, dialTimeoutMs: 500 },
    onTick: async () => void (await invitations.resolvePending()),
  });
  invitations = new InvitationService({ governance, identity, clock, store, remote: replicator, addresses: () => net.addresses() });
  let sync: ContextSync | undefined;
  const parts = createContexts({ store, governance, identity, applications: new FakeCatalog(), runtime: new MergingRuntime(), bus, clock, stampDelta: (d) => sync?.stampDelta(d) ?? {} });
  const keys = new GroupKeys({ store, governance, account: identity.accountId, network: net, router, logger });
  sync = new ContextSync({
    records: parts.records,
    executor: parts.executor,
    locate: (id) => parts.contexts.registration(id),
    identity,
    network: net,
    router,
    keys,
    bus,
    clock,
    logger,
    options: { heartbeatMs: 60, requestTimeoutMs: 2_000, snapshotTimeoutMs: 4_000, snapshotAbove: 10, ...syncOptions },
  });
  parts.contexts.attachSync(sync);
  const invites = new SpecializedInvites({ network: net, router, identity, contexts: parts.contexts, invitations, clock, logger, config: specialized });
  router.serve();
  replicator.start();
  keys.start();
  await sync.start();
  invites.start();
  const follow = autoFollow
    ? new AutoFollow({ governance, contexts: parts.contexts, records: parts.records, store, bus, account: identity.accountId, now: () => clock.now(), ...autoFollow })
    : undefined;
  follow?.start();
  const s = sync;
  return {
    ...parts,
    store,
    identity,
    governance,
    namespaces: new NamespaceService({ governance, identity, clock }),
    members: new MembersService({ governance, identity }),
    invitations,
    net,
    sync: s,
    keys,
    replicator,
    events,
    bus,
    specialized: invites,
    autoFollow: follow,
    advanceClock: (ms) => void (t += ms),
    stop: async () => {
      await follow?.stop();
      invites.stop();
      await s.stop();
      keys.stop();
      await replicator.stop();
      hub.leave(identity.publicKey);
    },
  };
}

export async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
