/**
 * Test doubles for the contexts domain: a scripted Runtime that behaves like a small kv-store
 * application (writes, events, commits, app errors, panics, gated calls for concurrency tests),
 * a fixed ApplicationCatalog, and a world with a real governance log over a MemoryStore.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { NodeIdentity } from '../identity/identity.ts';
import type { ApplicationCatalog, InstalledApplication } from '../applications/index.ts';
import type { Clock } from '../clock.ts';
import { EventBus, type NodeEvent } from '../bus.ts';
import { createAppliers, Governance, NamespaceService, type OpRegistration } from '../governance/index.ts';
import type { CallRequest, CallResult, Runtime, Writes } from '../runtime/index.ts';
import { MemoryStore } from '../store/memory.ts';
import { registerContextOps } from './ops.ts';
import { CallAdmission, createContexts, type Contexts } from './index.ts';

export const APP_ID = 'ab'.repeat(32);

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const sha = (...parts: (string | Uint8Array)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const keyOf = (name: string) => sha('key:', name);
const ROOT_KEY = keyOf('__root');

/**
 * A kv-store-like guest: `init`, `set {key,value}` (event `Inserted`, commit), `get {key}` (view),
 * `fail` (writes and events, then an application error), `panic`, `bad_output`. A method listed in
 * `gates` waits for its gate before answering.
 */
export class FakeRuntime implements Runtime {
  readonly calls: CallRequest[] = [];
  readonly gates = new Map<string, Promise<void>>();
  active = 0;
  maxActive = 0;

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  async call(req: CallRequest): Promise<CallResult> {
    this.calls.push(req);
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      await req.wasm();
      const gate = this.gates.get(req.method);
      if (gate) await gate;
      return await this.behave(req);
    } finally {
      this.active--;
    }
  }

  private async behave(req: CallRequest): Promise<CallResult> {
    const base = { logs: [], xcalls: [], privateWrites: [] as Writes, indexWrites: [] as Writes };
    const args = req.input.length > 0 ? (JSON.parse(dec(req.input)) as Record<string, string>) : {};
    const prevRoot = (await req.state.get(ROOT_KEY)) ?? new Uint8Array(32);
    const commitWith = (writes: Writes, tag: string) => {
      const rootHash = sha(prevRoot, tag);
      return { writes: [...writes, [ROOT_KEY, rootHash]] as Writes, commit: { rootHash, artifact: enc(`artifact:${tag}`) } };
    };
    switch (req.method) {
      case 'init': {
        if (await req.state.get(ROOT_KEY)) return { ok: false, kind: 'Panic', message: 'guest panicked: Cannot initialize over already existing state.', logs: [] };
        if (args.fail) return { ok: false, kind: 'Panic', message: `guest panicked: ${args.fail}`, logs: [] };
        return { ok: true, output: null, events: [], ...base, ...commitWith([], 'init') };
      }
      case 'set':
      case 'slow_set': {
        const c = commitWith([[keyOf(args.key), enc(args.value)]], `${args.key}=${args.value}`);
        const data = enc(JSON.stringify({ key: args.key, value: args.value }));
        return { ok: true, output: null, events: [{ kind: 'Inserted', data, handler: null }], ...base, ...c, privateWrites: [[keyOf(`p:${args.key}`), enc('1')]] };
      }
      case 'get':
      case 'slow_get': {
        const v = await req.state.get(keyOf(args.key));
        return { ok: true, output: enc(JSON.stringify(v ? dec(v) : null)), events: [], ...base, writes: [], commit: null };
      }
      case 'big':
        return { ok: true, output: enc('{"n":18446744073709551615}'), events: [], ...base, writes: [], commit: null };
      case 'bad_output':
        return { ok: true, output: enc('not json'), events: [], ...base, writes: [], commit: null };
      case 'fail':
        return { ok: false, kind: 'AppError', message: 'the method call returned an error: [123, 125]', logs: [] };
      case 'panic':
        return { ok: false, kind: 'Panic', message: 'guest panicked: boom at src/lib.rs:1:1', logs: [] };
      default:
        return { ok: false, kind: 'MethodNotFound', message: `method "${req.method}" not found`, logs: [] };
    }
  }
}

export class FakeCatalog implements ApplicationCatalog {
  readonly readOnly = new Set(['get', 'slow_get', 'big', 'bad_output']);
  readonly apps = new Map<string, InstalledApplication>([
    [APP_ID, { id: APP_ID, bundleBlobId: 'cd'.repeat(32), size: 1, source: 'test', package: 'kv', version: '1.0.0', signerId: 'did:key:z', services: [], installedAt: 0 }],
  ]);

  async get(id: string) {
    return this.apps.get(id) ?? null;
  }
  async wasm() {
    return new Uint8Array([0, 97, 115, 109]);
  }
  async abi() {
    return null;
  }
  async readOnlyMethods() {
    return this.readOnly;
  }
}

export interface World extends Contexts {
  store: MemoryStore;
  governance: Governance;
  identity: NodeIdentity;
  runtime: FakeRuntime;
  catalog: FakeCatalog;
  bus: EventBus;
  events: NodeEvent[];
  namespaceId: string;
}

/** `ops`: the op kinds of domains built on governance the test needs (as the composition root registers them) */
export async function world(ops: OpRegistration[] = [], opts: { admission?: CallAdmission } = {}): Promise<World> {
  const store = new MemoryStore();
  await store.open();
  let t = 1_700_000_000_000;
  const clock: Clock = { now: () => ++t };
  const { privateKey } = generateKeyPairSync('ed25519');
  const identity = await NodeIdentity.load(store, privateKey, clock.now());
  const bus = new EventBus();
  const events: NodeEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const governance = new Governance({ store, identity, clock, bus, appliers: createAppliers(registerContextOps, ...ops) });
  await governance.load();
  const ns = await new NamespaceService({ governance, identity, clock }).found({ applicationId: APP_ID });
  const runtime = new FakeRuntime();
  const catalog = new FakeCatalog();
  const parts = createContexts({ store, governance, identity, applications: catalog, runtime, bus, clock, admission: opts.admission });
  return { ...parts, store, governance, identity, runtime, catalog, bus, events, namespaceId: ns.id };
}
