/**
 * The sync domain's face: on a node with a network, context state sync (`ContextSync`) and the
 * group keys that seal its gossip, the applications fetched from members when a held context's is
 * missing (issue #34 §1), the contexts of this node's groups joined by themselves (auto-follow),
 * and specialized-node invitations (docs/sync.md). A standalone node has none of them.
 *
 * @example
 * const sync = createSync({ store, governance, identity, network, router, contexts, applications, blobs, invitations, bus, clock, logger, config });
 */
import type { Logger } from 'pino';
import type { NodeIdentity } from '../identity/identity.ts';
import type { EventBus } from '../bus.ts';
import type { Clock } from '../clock.ts';
import type { NodeConfig } from '../config/config.ts';
import { ApplicationFetch, AutoFollow, bundleBlobsOf, type AppFetchDeps, type Contexts } from '../contexts/index.ts';
import type { BlobService } from '../blobs/index.ts';
import type { InvitationService } from '../governance/index.ts';
import type { Governance } from '../governance/index.ts';
import type { GaugeSource } from '../http/metrics.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import type { Network } from '../network/index.ts';
import type { StreamRouter } from '../network/index.ts';
import type { Store } from '../store/store.ts';
import { GroupKeys } from './keys.ts';
import { registerSyncRoutes } from './routes.ts';
import { ContextSync } from './service.ts';
import { SpecializedInvites } from './specialized.ts';

export { registerKeyOps } from './keys.ts';

export interface SyncDeps {
  store: Store;
  governance: Governance;
  identity: NodeIdentity;
  /** absent on a standalone node: nothing syncs */
  network?: Network;
  router?: StreamRouter;
  contexts: Contexts;
  applications: AppFetchDeps['applications'];
  blobs: BlobService;
  invitations: InvitationService;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  config: NodeConfig['specialized'];
}

export interface SyncDomain {
  readonly name: 'sync';
  sync?: ContextSync;
  groupKeys?: GroupKeys;
  appFetch?: ApplicationFetch;
  autoFollow?: AutoFollow;
  specialized?: SpecializedInvites;
  /** specialized-node invitations (503 on a standalone node) */
  routes: RouteGroups;
  metrics(): Iterable<GaugeSource>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createSync(d: SyncDeps): SyncDomain {
  const { network, router, contexts, clock } = d;
  if (!network || !router) {
    return { name: 'sync', routes: { sync: (app) => registerSyncRoutes(app, {}) }, metrics: () => [], start: async () => undefined, stop: async () => undefined };
  }
  const logger = d.logger.child({ component: 'sync' });
  const groupKeys = new GroupKeys({ store: d.store, governance: d.governance, account: d.identity.accountId, network, router, logger });
  const sync = new ContextSync({
    records: contexts.records,
    executor: contexts.executor,
    locate: (id) => contexts.contexts.registration(id),
    identity: d.identity,
    network,
    router,
    keys: groupKeys,
    bus: d.bus,
    clock,
    logger,
  });
  contexts.contexts.attachSync(sync);
  const fetchLog = d.logger.child({ component: 'app-fetch' });
  const appFetch = new ApplicationFetch({
    records: contexts.records,
    applications: d.applications,
    blobs: bundleBlobsOf(d.blobs),
    locate: (id) => contexts.contexts.registration(id),
    now: () => clock.now(),
    // deltas that failed (or were quarantined) without the application are pulled and applied again
    onReady: (id) => {
      sync.applier.forget(id);
      sync.status.setPending(id, 0);
      sync.syncNow(id);
    },
    onError: (err, what) => fetchLog.info({ ...what, err: (err as Error).message }, 'fetching an application from members did not succeed yet (retried)'),
  });
  contexts.contexts.attachAppFetch(appFetch);
  const followLog = d.logger.child({ component: 'auto-follow' });
  const autoFollow = new AutoFollow({
    governance: d.governance,
    contexts: contexts.contexts,
    records: contexts.records,
    store: d.store,
    bus: d.bus,
    account: d.identity.accountId,
    now: () => clock.now(),
    onPass: (r) => {
      if (r.joined.length + r.left.length > 0) followLog.info({ joined: r.joined, left: r.left, remaining: r.remaining }, 'auto-follow pass');
    },
    onError: (err, contextId) =>
      contextId
        ? followLog.warn({ err, contextId }, 'auto-follow could not join or leave a context (tried again on the next pass)')
        : followLog.error({ err }, 'an auto-follow pass failed (tried again on the next governance op or start)'),
  });
  const specialized = new SpecializedInvites({ network, router, identity: d.identity, contexts: contexts.contexts, invitations: d.invitations, clock, logger, config: d.config });
  const failures = sync.applier.failures;
  return {
    name: 'sync',
    sync,
    groupKeys,
    appFetch,
    autoFollow,
    specialized,
    routes: { sync: (app) => registerSyncRoutes(app, { specialized }) },
    metrics: () => [
      {
        name: 'hearth_sync_apply_failures_total',
        help: 'Remote deltas whose merge failed, by outcome (retried: retries scheduled; recovered: applied by a retry; exhausted, quarantined: quarantined after retries, or at once)',
        type: 'counter',
        read: () => Object.entries(failures).map(([outcome, value]) => ({ labels: { outcome }, value })),
      },
    ],
    start: async () => {
      groupKeys.start();
      await sync.start();
      appFetch.start();
      autoFollow.start();
      specialized.start();
    },
    // the timers of fetches and invitations end first, then the passes and pulls in flight are
    // awaited, and the group keys go last: sync's gossip is sealed with them
    stop: async () => {
      appFetch.stop();
      specialized.stop();
      await autoFollow.stop();
      await sync.stop();
      groupKeys.stop();
    },
  };
}
