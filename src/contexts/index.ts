/**
 * The contexts domain's face: one factory the composition root calls (its lifecycle: the deleted
 * contexts' reaper, the call admission's series), the route registrations, the JSON-RPC extension
 * point (rpc-methods.ts), and the parts sync runs on a node with a network (fetching a missing
 * application from members, auto-follow).
 *
 * @example
 * const contexts = createContexts({ store, governance, identity, applications, runtime, bus, clock, rpcMethods: () => ({ set_ephemeral }) });
 * contexts.routes.contexts(app);
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { ApplicationCatalog } from '../applications/index.ts';
import type { Clock } from '../clock.ts';
import type { EventBus } from '../bus.ts';
import type { Governance } from '../governance/index.ts';
import type { GaugeSource } from '../http/metrics.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import type { Runtime } from '../runtime/index.ts';
import type { Store } from '../store/store.ts';
import { ContextCalls } from './calls.ts';
import { DeletedContextReaper } from './deletions.ts';
import { ContextExecutor, type ExecutorDeps } from './executor.ts';
import { ContextService } from './service.ts';
import { ContextStore } from './store.ts';
import { RawStateReader } from './raw-state.ts';
import { registerContextRoutes } from './routes.ts';
import type { ContextMeta } from './types.ts';
import { registerJsonRpcRoute, type JsonRpcDeps } from './rpc.ts';
import type { RpcMethodHandler } from './rpc-methods.ts';

export interface ContextsDeps {
  store: Store;
  governance: Governance;
  identity: NodeIdentity;
  applications: ApplicationCatalog;
  runtime: Runtime;
  bus: EventBus;
  clock: Clock;
  /** failures of background work (dropping deleted contexts' state) */
  onError?: (err: unknown) => void;
  /** stamps each delta made here for replication (src/sync); absent on a node without a network */
  stampDelta?: ExecutorDeps['stampDelta'];
  /** bounds on pending calls (issue #23 §4); the defaults when absent */
  admission?: ExecutorDeps['admission'];
  /** a call's deadline (config `[runtime] deadline_ms`) */
  callDeadlineMs?: number;
  /**
   * JSON-RPC methods other domains contribute (the event stream's `set_ephemeral`), read when the
   * routes are mounted: those domains are built after this one
   */
  rpcMethods?: () => Record<string, RpcMethodHandler>;
  /** how each JSON-RPC call ended, for metrics */
  onRpcOutcome?: JsonRpcDeps['onOutcome'];
}

export interface Contexts {
  readonly name: 'contexts';
  contexts: ContextService;
  calls: ContextCalls;
  executor: ContextExecutor;
  /** forgets local state of contexts whose group or namespace was deleted (start/stop) */
  reaper: DeletedContextReaper;
  /** the contexts' records, for domains that act on contexts in place (upgrades' migrations) */
  records: ContextStore;
  /** a context's raw state rows, read-only (hearth's raw-state routes) */
  rawState: RawStateReader;
  /** `/admin-api/contexts*`, `/admin-api/identity/context` and `POST /jsonrpc` */
  routes: RouteGroups;
  /** the call admission's series (pending calls and bytes, refusals) */
  metrics(): Iterable<GaugeSource>;
  /** the reaper stops following deletions (it is started by whoever opened the contexts, after its sweep) */
  beforeStop(): void;
}

export function createContexts(d: ContextsDeps): Contexts {
  const store = new ContextStore(d.store);
  // the executor's commit check reads the service, which needs the executor
  let contexts: ContextService;
  const mayCommit = (meta: ContextMeta) => contexts.requireNotRemoved(meta);
  const executor = new ContextExecutor({
    stampDelta: d.stampDelta,
    store,
    runtime: d.runtime,
    applications: d.applications,
    bus: d.bus,
    clock: d.clock,
    mayCommit,
    admission: d.admission,
    callDeadlineMs: d.callDeadlineMs,
  });
  contexts = new ContextService({ store, executor, governance: d.governance, identity: d.identity, applications: d.applications, bus: d.bus, clock: d.clock });
  const calls = new ContextCalls({ store, executor, contexts, identity: d.identity, applications: d.applications });
  const reaper = new DeletedContextReaper({ store, executor, contexts, governance: d.governance, bus: d.bus, onError: d.onError });
  const rawState = new RawStateReader(store);
  return {
    name: 'contexts',
    contexts,
    calls,
    executor,
    reaper,
    records: store,
    rawState,
    routes: {
      contexts: (app) => {
        registerContextRoutes(app, { contexts, calls, rawState, admission: executor.admission });
        registerJsonRpcRoute(app, { calls, methods: d.rpcMethods?.(), onOutcome: d.onRpcOutcome, admission: executor.admission });
      },
    },
    metrics: () => executor.admission.series(),
    beforeStop: () => reaper.stop(),
  };
}

export { CallAdmission, DEFAULT_ADMISSION, type AdmissionLimits } from './admission.ts';
export { ApplicationFetch, bundleBlobsOf, type AppFetchDeps } from './app-fetch.ts';
export { AutoFollow } from './auto-follow.ts';
export { registerContextRoutes, type ContextRoutesDeps } from './routes.ts';
export { registerJsonRpcRoute, type JsonRpcDeps } from './rpc.ts';
export { RpcMethodError, type RpcCall, type RpcMethodHandler } from './rpc-methods.ts';
export { UNINITIALIZED_HASH, type ContextMeta } from './types.ts';
export type { ContextStore } from './store.ts';

/** The JSON-RPC methods of this domain, for other transports (the WebSocket `execute`). */
export function contextRpcMethods(c: Contexts): Record<string, RpcMethodHandler> {
  return { execute: (call) => c.calls.execute(call.params, call.principal, call.signal) };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { decodeOutput, encodeArgs, methodNameProblem } from './calls.ts';
export { ContextGone, deltaIdOf } from './executor.ts';
export type { ContextExecutor } from './executor.ts';
export { CONTEXT_OPS, registerContextOps, requireMayCreateContext } from './ops.ts';
export { readOnlyOf, releaseOf } from './releases.ts';
export type { Release } from './releases.ts';
export { ContextParams } from './schemas.ts';
export type { ContextService } from './service.ts';
export { GENESIS_PARENT, MAX_ARGS_BYTES, MAX_INIT_PARAMS_BYTES } from './types.ts';
export type { DeltaRecord } from './types.ts';
