/**
 * The composition root: builds every domain from the configuration through its face
 * (`src/<domain>/index.ts`), keeps them in one list, starts the list in order and stops it in
 * reverse (store → services → HTTP), so SIGTERM drains requests before the store closes
 * (docs/architecture.md "The composition root").
 */
import { createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { createAccounts } from '../accounts/index.ts';
import { NodeIdentity } from '../identity/identity.ts';
import { createAliases } from '../aliases/index.ts';
import { createApplications, type ApplicationsDomain } from '../applications/index.ts';
import { type AuthDomain, createAuth, KeyStore } from '../auth/index.ts';
import { createBlobs } from '../blobs/index.ts';
import { EventBus } from '../bus.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { NodeConfig } from '../config/config.ts';
import { readSecret, type HomePaths } from '../config/home.ts';
import { CallAdmission, createContexts, type Contexts } from '../contexts/index.ts';
import { createDelegation } from '../delegation/index.ts';
import { createEvents, type EventsDomain } from '../events/index.ts';
import { createGovernance, type GovernanceDomain, peerSpeaksForMember, replicationView } from '../governance/index.ts';
import { buildApp, type App } from '../http/app.ts';
import type { Lifecycle } from '../http/health-routes.ts';
import { readFdLimit, resolveMaxConnections } from '../http/limits.ts';
import { Metrics, storeSizeGauge } from '../http/metrics.ts';
import type { RouteCatalogue, RouteRecord } from '../http/openapi.ts';
import { createNetwork, type NetworkFactory, type NodeNetwork } from '../network/index.ts';
import { createRuntime, DEFAULT_MODULE_CACHE_SIZE, type RuntimeDomain } from '../runtime/index.ts';
import { LevelStore } from '../store/level.ts';
import { createSync, type SyncDomain } from '../sync/index.ts';
import { createTee } from '../tee/index.ts';
import { createUpgrades, GroupUpgradeStatus, type UpgradesDomain } from '../upgrades/index.ts';
import { AdminMissingError, type AdminCredentials } from './credentials.ts';
import { domainsReady, quiesceDomains, startAfterListen, startDomains, stopDomains, type Domain } from './domain.ts';
import { whenQuiet } from './http-quiet.ts';
import { nodeAppliers } from './ops.ts';
import { PREPARE_BUDGET_MS, prepareModules } from './prepare.ts';
import { registerRoutes, type RouteTableDeps } from './routes.ts';
import { StoreSupervisor } from './store-supervisor.ts';


export interface NodeOptions {
  paths: HomePaths;
  config: NodeConfig;
  logger: Logger;
  clock?: Clock;
  /** created when the node has no admin account yet */
  admin?: AdminCredentials;
  /** overrides config.server.port (0 = any free port, for tests) */
  port?: number;
  host?: string;
  /** builds the peer-to-peer network: libp2p from the config when absent; `null` = a standalone node (no peers, nothing replicates) */
  network?: NetworkFactory | null;
  /**
   * called when the node cannot go on (its store cannot be reopened); the `run` command exits so a
   * supervisor restarts it. Default: the node stops.
   */
  onFatal?: (message: string) => void;
}

/**
 * The network starts after the listen once no request has been in flight for 50 ms, 1 s after it
 * at the latest (http-quiet.ts): its code's load holds the main thread ~100 ms, which the first
 * calls after a start (< 20 ms, issue #33) should not wait for.
 */
const START_QUIET = { quietMs: 50, maxMs: 1_000 };

/** how long a stopping node waits for requests in flight before closing every connection */
const DRAIN_DEADLINE_MS = 5_000;

export class HearthNode {
  private state: Lifecycle = 'starting';
  private app?: App;
  private catalogue?: RouteCatalogue;
  private listening?: string;
  private readonly clock: Clock;
  readonly store: LevelStore;
  readonly keyStore: KeyStore;
  readonly metrics = new Metrics();
  readonly bus: EventBus;
  /**
   * The domains, in the order they start; they stop in reverse. The store comes first and closes
   * last; HTTP listens after the whole list started and drains before any of it stops.
   */
  private domains: Domain[];
  /** what the node guard asks of the domains (the route table registers it), from `open` */
  private guard!: Pick<RouteTableDeps, 'auth' | 'locateGroup'>;
  // the parts callers reach for (the CLI's `init`, tests), from the faces
  identity!: NodeIdentity;
  keys!: AuthDomain['keys'];
  applications!: ApplicationsDomain['applications'];
  governance!: GovernanceDomain['governance'];
  invitations!: GovernanceDomain['invitations'];
  runtime!: RuntimeDomain['runtime'];
  contexts!: Contexts;
  presence!: EventsDomain['presence'];
  /** the live event stream: SSE sessions and WebSockets over the bus */
  events!: EventsDomain['stream'];
  upgrades!: UpgradesDomain['upgrades'];
  /** the peer-to-peer network (absent when standalone) */
  network?: NodeNetwork;
  /** context state sync (absent when standalone) */
  sync?: SyncDomain['sync'];
  /** the admin this start created from `NodeOptions.admin` (unset when the node already had one) */
  provisionedAdmin?: string;

  constructor(private readonly opts: NodeOptions) {
    this.clock = opts.clock ?? systemClock;
    this.store = new LevelStore(opts.paths.data);
    this.keyStore = new KeyStore(this.store);
    this.bus = new EventBus((err) => opts.logger.error({ err }, 'event listener failed'));
    this.domains = [this.storeDomain()];
  }

  /** Every registered route with its schemas (the OpenAPI document's source). */
  get routes(): readonly RouteRecord[] {
    return this.catalogue?.routes ?? [];
  }

  get url(): string {
    if (!this.listening) throw new Error('node is not listening');
    return this.listening;
  }

  get lifecycle(): Lifecycle {
    return this.state;
  }

  /**
   * The store's domain, first in the list: its watcher (store-supervisor.ts) starts first and
   * stops before requests drain, so it never reopens a store that is closing; the store itself
   * (opened by `open`) closes last, after every domain that writes to it stopped.
   */
  private storeDomain(): Domain {
    let supervisor: StoreSupervisor | undefined;
    return {
      name: 'store',
      start: () => {
        supervisor = new StoreSupervisor({ store: this.store, logger: this.opts.logger, onFatal: this.opts.onFatal ?? (() => void this.stop()) });
        supervisor.start();
      },
      beforeStop: () => supervisor?.stop(),
      stop: () => this.store.close(),
    };
  }

  /**
   * Readies the runtime with the modules of this node's contexts, as many as it keeps compiled
   * (prepare.ts): begun right after the runtime starts, waited for (at most 2 s) before listening,
   * so the first call after a restart does not pay for them (issue #22; docs/runtime.md "First
   * call after a start").
   */
  private prepareDomain(contexts: Contexts): Domain {
    const { logger } = this.opts;
    let prepared: Promise<unknown> = Promise.resolve();
    return {
      name: 'prepare',
      start: () => {
        const onError = (key: string, err: unknown) => logger.warn({ err, module: key }, 'preparing a context’s module failed');
        prepared = contexts.records
          .listMeta()
          .then((metas) => {
            const entries = metas.map((meta) => ({ key: `${meta.bundleBlobId ?? meta.applicationId}:${meta.serviceName ?? ''}`, prepare: () => contexts.executor.prepare(meta) }));
            return prepareModules(entries, { limit: DEFAULT_MODULE_CACHE_SIZE, budgetMs: PREPARE_BUDGET_MS, onError });
          })
          .then((ready) => {
            if (ready.timedOut) logger.info(ready, 'the contexts’ modules are still being prepared: listening meanwhile');
          })
          .catch((err: unknown) => void logger.warn({ err }, 'preparing the contexts’ modules failed'));
      },
      ready: () => prepared,
    };
  }

  /** Opens the store and builds the domains through their faces, without serving HTTP (used by `init`). */
  async open(): Promise<void> {
    const { config, paths, logger } = this.opts;
    const { clock, store, bus } = this;
    const now = () => clock.now();
    await store.open();
    const auth = await createAuth({ keyStore: this.keyStore, secret: await readSecret(paths.tokenSecret), clock, config: config.auth, store, development: config.node.development });
    const nodeKey = createPrivateKey(await readFile(paths.nodeKey));
    const identity = await NodeIdentity.load(store, nodeKey, clock.now());
    // the routes of a domain take what they need of the domains built after it as late-bound callbacks,
    // read when the route table mounts them (in `start`, once every domain is built)
    const network = await createNetwork({
      factory: this.opts.network,
      key: nodeKey,
      config,
      logger,
      store,
      now,
      publicKey: identity.publicKey,
      replication: () => (gov.replicator ? replicationView(gov.replicator) : {}),
    });
    const { net, router } = network;
    const gov = await createGovernance({
      store,
      identity,
      clock,
      bus,
      appliers: nodeAppliers(),
      network: net,
      router,
      logger,
      onDialed: network.onDialed,
      routeDeps: () => ({
        accounts: accounts.accounts,
        contextUsage: (id) => contexts!.contexts.usage(id),
        // GroupInfo `activeUpgrade`: the group's upgrade while it is in progress on this node
        groupInfoFields: { activeUpgrade: { schema: GroupUpgradeStatus, read: (groupId) => upgrades.upgrades.activeUpgrade(groupId) } },
      }),
    });
    const governance = gov.governance;
    // the blobs and the catalogue of installed applications refer to each other, as do blobs and contexts
    let applications: ApplicationsDomain['applications'] | undefined;
    let contexts: Contexts | undefined;
    const blobs = await createBlobs({
      store,
      dir: paths.blobs,
      now,
      quota: config.blobs,
      network: net,
      // a peer is served, and asked for, a context's blobs when it speaks for a member of its group
      membership: (peer, contextId) => {
        const reg = contexts?.contexts.registration(contextId);
        return reg && peerSpeaksForMember(reg.ns, reg.group, peer);
      },
      isPinned: async (blobId) => (await applications?.isPinned(blobId)) ?? false,
      logger,
    });
    const apps = createApplications({ store, blobs: blobs.store, config, now, homeDir: paths.dir });
    applications = apps.applications;
    const accounts = await createAccounts({ store, identity, clock, governance, isInstalled: async (id) => (await apps.applications.get(id)) !== null });
    const runtime = createRuntime({ blobs: blobs.blobs, identity, config: config.runtime, onError: (err) => logger.error({ err }, 'WebAssembly runtime failed to start') });
    let sync: SyncDomain | undefined;
    contexts = createContexts({
      store,
      governance,
      identity,
      applications,
      runtime: runtime.runtime,
      bus,
      clock,
      onError: (err) => logger.error({ err }, 'dropping the state of deleted contexts failed'),
      stampDelta: (delta) => sync?.sync?.stampDelta(delta) ?? {},
      callDeadlineMs: runtime.callDeadlineMs,
      admission: new CallAdmission({
        contextCalls: config.runtime.contextPendingCalls,
        contextBytes: config.runtime.contextPendingBytes,
        totalCalls: config.runtime.pendingCalls,
        totalBytes: config.runtime.pendingBytes,
      }),
      // `POST /jsonrpc` also answers the event stream's methods (`set_ephemeral`)
      rpcMethods: () => events.contextRpcMethods,
      onRpcOutcome: (outcome) => this.metrics.jsonrpc(outcome),
    });
    sync = createSync({ store, governance, identity, network: net, router, contexts, applications, blobs: blobs.blobs, invitations: gov.invitations, bus, clock, logger, config: config.specialized });
    // contexts whose group went away while the node was down, then every later deletion
    const dropped = await contexts.reaper.sweep();
    if (dropped.length > 0) logger.info({ contexts: dropped }, 'dropped the local state of contexts whose group was deleted');
    contexts.reaper.start();
    const tee = await createTee({ provider: config.tee.provider, homeDir: paths.dir, identity, applications });
    const upgrades = createUpgrades({ store, governance, contexts, applications, identity, bus, clock, logger, network: net, topics: gov.replicator });
    const delegation = createDelegation({ store, governance, contexts, applications, identity, clock });
    const events = createEvents({ bus, clock, governance, contexts, logger });
    const aliases = createAliases({ store });
    this.guard = { auth: auth.auth, locateGroup: (id) => governance.locate(id) };
    this.identity = identity;
    this.keys = auth.keys;
    this.applications = applications;
    this.governance = governance;
    this.invitations = gov.invitations;
    this.runtime = runtime.runtime;
    this.contexts = contexts;
    this.presence = events.presence;
    this.events = events.stream;
    this.upgrades = upgrades.upgrades;
    this.network = net;
    this.sync = sync.sync;
    // The start order: the runtime warms its workers first and the contexts' modules are prepared
    // while the rest starts; event streams are open before peers connect; upgrades last, once sync
    // runs. The network starts after HTTP listens (`startAfterListen`): what serves on it (blobs,
    // governance replication, sync) registers its topics, protocols and peer listeners before, and
    // the network takes them up when it starts.
    // Each stops before the ones listed ahead of it. The route table mounts every domain's routes
    // from this list (routes.ts); domains without a lifecycle are listed for their routes and metrics,
    // so that each domain of the node is one line here.
    this.domains.push(
      auth,
      accounts,
      aliases,
      runtime,
      this.prepareDomain(contexts),
      apps,
      contexts,
      tee,
      events,
      network,
      blobs,
      gov,
      delegation,
      sync,
      upgrades,
    );
  }

  async start(): Promise<void> {
    const { config, logger } = this.opts;
    await this.open();
    try {
      await this.ensureAdmin();
      this.metrics.addGauge(storeSizeGauge({ data: this.opts.paths.data, blobs: this.opts.paths.blobs }));
      // the node's name (its home's, `--node`), so the dashboard's overview can say which node this is
      this.metrics.addGauge({ name: 'hearth_node_info', help: 'This node: its name', read: () => [{ labels: { name: config.node.name }, value: 1 }] });
      for (const domain of this.domains) for (const series of domain.metrics?.() ?? []) this.metrics.addGauge(series);
      const cap = resolveMaxConnections(config.server.maxConnections, readFdLimit());
      if (cap.note) logger.warn(cap.note);
      this.app = await buildApp({
        logger,
        corsAllowedOrigins: config.server.corsAllowedOrigins,
        trustProxy: config.server.trustProxy,
        connections: { ...config.server, maxConnections: cap.max },
        metrics: this.metrics,
        accessLog: config.server.accessLog,
        routes: (app, catalogue) => {
          this.catalogue = catalogue;
          registerRoutes(app, {
            ...this.guard,
            delegatedAccess: config.admin.delegatedAccess,
            store: this.store,
            lifecycle: () => this.state,
            // a standalone node (no network) answers 0, as the reference without a swarm
            peerCount: () => this.network?.peerCount() ?? 0,
            metrics: this.metrics,
            catalogue,
            domains: this.domains,
          });
        },
      });
      const host = this.opts.host ?? config.server.host;
      await startDomains(this.domains);
      await domainsReady(this.domains);
      await this.app.listen({ host, port: this.opts.port ?? config.server.port });
      const addr = this.app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
      this.listening = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      // the network loads and starts while HTTP answers, once the first requests have been
      // answered (http-quiet.ts): readiness says `starting` until it has
      await whenQuiet(this.app.server, START_QUIET);
      if (this.state !== 'starting') return; // stopped meanwhile: nothing more to start
      await startAfterListen(this.domains);
      this.state = 'ready';
    } catch (err) {
      // a start that failed leaves nothing running: every domain is stopped, its failures ignored
      await this.app?.close().catch(() => undefined);
      quiesceDomains(this.domains, () => undefined);
      await stopDomains(this.domains, () => undefined);
      throw err;
    }
  }

  private async ensureAdmin(): Promise<void> {
    await this.provisionAdminIfNone();
    // a home from before the owner record adopts its owner once (issue #37 item 2)
    const adopted = await this.keys.adoptOwner();
    if (adopted !== undefined) this.opts.logger.warn({ username: adopted }, 'node owner recorded: the user the node already treated as its owner');
    const owner = await this.keys.owner();
    const previous = owner?.history.at(-1);
    if (owner) this.opts.logger.info({ owner: owner.username, how: owner.how, since: owner.since, previous: previous?.username ?? null }, 'node owner');
  }

  private async provisionAdminIfNone(): Promise<void> {
    if (await this.keys.hasUserPasswordAdmin()) return;
    const admin = this.opts.admin;
    if (!admin) {
      throw new AdminMissingError(
        'This node has no admin account. Set MERO_AUTH_ADMIN_USER and MERO_AUTH_ADMIN_PASSWORD (8-128 characters), ' +
          'or pass --admin-user and --admin-password, then start it again.',
      );
    }
    await this.keys.provisionAdmin(admin.username, admin.password);
    this.provisionedAdmin = admin.username;
    this.opts.logger.info({ username: admin.username }, 'admin account created');
  }

  /**
   * Lets requests in flight finish, up to a deadline: a client may hold a connection that never
   * sends a request (fetch opens spare sockets), which would otherwise keep the server open until
   * its header timeout; past the deadline every connection is closed.
   */
  private async drainHttp(): Promise<void> {
    const app = this.app;
    if (!app) return;
    const force = setTimeout(() => app.server.closeAllConnections(), DRAIN_DEADLINE_MS);
    try {
      await app.close();
    } finally {
      clearTimeout(force);
    }
  }

  /** Readiness flips first, then what would hold the drain ends, requests drain, and the domains stop in reverse. */
  async stop(): Promise<void> {
    if (this.state === 'shutting_down') return;
    this.state = 'shutting_down';
    quiesceDomains(this.domains);
    await this.drainHttp();
    await stopDomains(this.domains);
  }
}
