/**
 * The composition root: builds every component from the configuration and starts and stops them
 * in order (store → services → HTTP), so SIGTERM drains requests before the store closes.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { KeysService } from '../auth/keys-service.ts';
import { AuthService } from '../auth/service.ts';
import { KeyStore } from '../auth/store.ts';
import { TokenIssuer } from '../auth/tokens.ts';
import { BlobPeers } from '../blobs/peers.ts';
import { ApplicationFetch, bundleBlobsOf } from '../contexts/app-fetch.ts';
import { BlobService } from '../blobs/service.ts';
import { BlobStore } from '../blobs/store.ts';
import { DEV_SIGNING_KEY_FILE } from '../applications/dev-bundle.ts';
import { createApplications } from '../applications/factory.ts';
import type { ApplicationService } from '../applications/service.ts';
import { NodeIdentity } from '../identity/identity.ts';
import { systemClock, unixSecs, type Clock } from '../clock.ts';
import { EventBus } from '../bus.ts';
import { PresenceService } from '../events/presence.ts';
import { EventStreamService } from '../events/service.ts';
import { contextApplicationVia } from '../events/access.ts';
import { presenceRpcMethods } from '../events/presence-rpc.ts';
import { PresenceIntentService } from '../events/presence-intents.ts';
import { CallAdmission, contextRpcMethods, createContexts, type Contexts } from '../contexts/index.ts';
import { AutoFollow } from '../contexts/auto-follow.ts';
import { WasmRuntime } from '../runtime/runtime.ts';
import { DEFAULT_MODULE_CACHE_SIZE } from '../runtime/limits.ts';
import { PREPARE_BUDGET_MS, prepareModules, type PrepareOutcome } from './prepare.ts';
import { blobAccess } from '../runtime/blob-access.ts';
import { identitySealing } from '../runtime/sealing.ts';
import { groupPathVia } from '../governance/authority.ts';
import { peerSpeaksForMember } from '../governance/peer-membership.ts';
import { GroupService } from '../governance/groups/service.ts';
import { MembersService } from '../governance/groups/members-service.ts';
import { Governance } from '../governance/log.ts';
import { NamespaceService } from '../governance/namespaces/service.ts';
import { NamespaceManageService } from '../governance/namespaces/manage-service.ts';
import { AccountService } from '../accounts/service.ts';
import { nodeAppliers } from './ops.ts';
import { OwnerService } from '../governance/owner/service.ts';
import { InvitationService } from '../governance/invitations/service.ts';
import { SettingsService } from '../governance/settings/service.ts';
import type { NodeConfig } from '../config/config.ts';
import { readSecret, type HomePaths } from '../config/home.ts';
import { buildApp, type App } from '../http/app.ts';
import type { RouteCatalogue, RouteRecord } from '../http/openapi.ts';
import type { Lifecycle } from '../http/health-routes.ts';
import { registerRoutes } from './routes.ts';
import { readFdLimit, resolveMaxConnections } from '../http/limits.ts';
import { Metrics, storeSizeGauge } from '../http/metrics.ts';
import { LevelStore } from '../store/level.ts';
import { VERSION } from '../version.ts';
import { loadTeeBackend } from '../tee/provider.ts';
import { TeeService } from '../tee/service.ts';
import { SigningKeyService } from '../governance/signing-key/service.ts';
import { UpgradeService } from '../upgrades/service.ts';
import { GroupUpgradeStatus } from '../upgrades/schemas.ts';
import { IntentService } from '../delegation/intents.ts';
import { GroupIntentService } from '../delegation/group-intents.ts';
import { AdminMissingError } from './credentials.ts';
import type { Network } from '../network/contract.ts';
import { StreamRouter } from '../network/router.ts';
import { createLibp2pNetwork } from '../network/libp2p.ts';
import { libp2pPeerIdOf } from '../network/peer-id.ts';
import { AddressBook } from '../network/address-book.ts';
import { dialableHere } from '../network/quic.ts';
import { registerNetworkMetrics } from '../network/metrics.ts';
import { replicationSeries } from '../governance/replication/metrics.ts';
import { replicationView } from '../governance/replication/view.ts';
import { GovernanceReplicator } from '../governance/replication/replicator.ts';
import { ContextSync } from '../sync/service.ts';
import { GroupKeys } from '../sync/keys.ts';
import { SpecializedInvites } from '../sync/specialized.ts';

/** A network the node starts and stops (network/libp2p.ts in production; a MemoryNetwork in tests). */
export interface NodeNetwork extends Network {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export type NetworkFactory = (ctx: { key: KeyObject; config: NodeConfig; logger: Logger; remembered: string[] }) => NodeNetwork;

/** The production network: libp2p on `[swarm]`, dialing `[bootstrap] nodes`, mDNS per `[discovery]` (docs/network.md). */
const libp2pFromConfig: NetworkFactory = ({ key, config, logger, remembered }) =>
  createLibp2pNetwork({
    privateKey: key,
    host: config.swarm.host,
    port: config.swarm.port,
    // configured addresses are checked (a QUIC one on Node.js 20 is refused); remembered ones this
    // Node.js cannot dial are left out (learnt while the node ran on Node.js 22+)
    bootstrap: [...new Set([...config.bootstrap.nodes, ...remembered.filter((a) => dialableHere(a))])],
    mdns: config.discovery.mdns,
    internet: config.network,
    logger, // the network names itself (component: network) in its own child logger
  });
import { StoreSupervisor } from './store-supervisor.ts';
import { IdleCompactor } from '../runtime/idle-compactor.ts';

export interface AdminCredentials {
  username: string;
  password: string;
}

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

export { AdminMissingError };

/** how long a stopping node waits for requests in flight before closing every connection */
const DRAIN_DEADLINE_MS = 5_000;

export class HearthNode {
  private state: Lifecycle = 'starting';
  private app?: App;
  private catalogue?: RouteCatalogue;
  private listening?: string;
  readonly store: LevelStore;
  private supervisor?: StoreSupervisor;
  readonly keyStore: KeyStore;
  readonly metrics = new Metrics();
  auth!: AuthService;
  keys!: KeysService;
  blobs!: BlobService;
  /** blobs between peers (absent when standalone) */
  blobPeers?: BlobPeers;
  /** installed applications: the `ApplicationCatalog` contexts and the runtime load wasm from */
  applications!: ApplicationService;
  readonly bus: EventBus;
  identity!: NodeIdentity;
  governance!: Governance;
  namespaces!: NamespaceService;
  groups!: GroupService;
  namespaceManage!: NamespaceManageService;
  accounts!: AccountService;
  owner!: OwnerService;
  invitations!: InvitationService;
  settings!: SettingsService;
  members!: MembersService;
  /** ephemeral presence per context (JSON-RPC `set_ephemeral`, replayed on subscribe) */
  presence!: PresenceService;
  /** the live event stream: SSE sessions and WebSockets over the bus */
  events!: EventStreamService;
  /** the WebAssembly host running application methods */
  runtime!: WasmRuntime;
  private readonly compactor = new IdleCompactor(); // a full GC once idle after load (issue #22 memory)
  /** contexts: lifecycle, method calls (JSON-RPC `execute`, query) */
  contexts!: Contexts;
  /** relayed, device-signed presence (`POST /contexts/{id}/presence-intents`) */
  presenceIntents!: PresenceIntentService;
  /** the peer-to-peer network, its sync-stream router and governance replication (absent when standalone) */
  network?: NodeNetwork;
  router?: StreamRouter;
  replicator?: GovernanceReplicator;
  /** context state sync and the group keys that seal its gossip (absent when standalone) */
  sync?: ContextSync;
  groupKeys?: GroupKeys;
  /** specialized-node invitations (read-only replicas) */
  specialized?: SpecializedInvites;
  /** joins the contexts of this node's groups by itself (src/contexts/auto-follow.ts; absent when standalone) */
  autoFollow?: AutoFollow;
  /** fetches from members the application a held context names when it is missing here (issue #34 §1) */
  appFetch?: ApplicationFetch;
  /** TEE information and attestation through the configured provider (docs/tee.md) */
  tee!: TeeService;
  /** group signing keys this node holds (`POST /groups/{id}/signing-key`) */
  signingKeys!: SigningKeyService;
  /** group upgrades and this node's migrations (src/upgrades) */
  upgrades!: UpgradeService;
  /** delegated execution: intents, context and governance intents run for members under warrants */
  intents!: IntentService;
  groupIntents!: GroupIntentService;
  /** the admin this start created from `NodeOptions.admin` (unset when the node already had one) */
  provisionedAdmin?: string;

  constructor(private readonly opts: NodeOptions) {
    this.store = new LevelStore(opts.paths.data);
    this.keyStore = new KeyStore(this.store);
    this.bus = new EventBus((err) => opts.logger.error({ err }, 'event listener failed'));
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

  /** Opens the store and builds the services, without serving HTTP (used by `init`). */
  async open(): Promise<void> {
    const { config, paths } = this.opts;
    const clock = this.opts.clock ?? systemClock;
    await this.store.open();
    const tokens = new TokenIssuer(await readSecret(paths.tokenSecret), config.auth.issuer, config.auth.leewaySecs, clock);
    this.auth = new AuthService({ keys: this.keyStore, tokens, clock, config: config.auth });
    this.keys = new KeysService({ keys: this.keyStore, clock, config: config.auth, auth: this.auth });
    await this.keyStore.sweep(unixSecs(clock));
    const blobStore = new BlobStore(this.store, paths.blobs, { now: () => clock.now(), quota: config.blobs });
    await blobStore.open();
    this.applications = createApplications({ store: this.store, blobs: blobStore, config, now: () => clock.now() });
    const nodeKey = createPrivateKey(await readFile(paths.nodeKey));
    this.identity = await NodeIdentity.load(this.store, nodeKey, clock.now());
    this.governance = new Governance({ store: this.store, identity: this.identity, clock, bus: this.bus, appliers: nodeAppliers() });
    const verified = await this.governance.load();
    if (verified.droppedOps.length + verified.droppedNamespaces.length + verified.rederived.length > 0) {
      // one line: what the stored governance log held that honest code does not accept (issue #23 section 6)
      this.opts.logger.warn(
        {
          droppedOps: verified.droppedOps.length,
          droppedNamespaces: verified.droppedNamespaces,
          rederived: verified.rederived,
          reasons: [...new Set(verified.droppedOps.map((d) => d.reason))],
          firstDropped: verified.droppedOps.slice(0, 10),
        },
        'governance log re-verified on start: ops that fail verification were dropped and state re-derived',
      );
    }
    const factory = this.opts.network === undefined ? libp2pFromConfig : this.opts.network;
    const book = new AddressBook(this.store, () => clock.now());
    this.network = factory ? factory({ key: nodeKey, config, logger: this.opts.logger, remembered: await book.list() }) : undefined;
    if (this.network) {
      const network = this.network;
      this.router = new StreamRouter(this.network);
      this.replicator = new GovernanceReplicator({
        governance: this.governance,
        network: this.network,
        router: this.router,
        clock,
        logger: this.opts.logger,
        onTick: async () => void (await this.invitations.resolvePending()),
        onDialed: async (address) => {
          network.keep(address);
          await book.remember(address);
        },
      });
    }
    // blobs a context names are fetched from, and served to, the members of its group on other nodes
    this.blobPeers = this.network
      ? new BlobPeers({
          network: this.network,
          store: blobStore,
          membership: (peer, contextId) => {
            const reg = this.contexts.contexts.registration(contextId);
            return reg && peerSpeaksForMember(reg.ns, reg.group, peer);
          },
          onError: (err) => this.opts.logger.debug({ err }, 'serving a blob to a peer failed'),
          announce: { onError: (blobId, err) => this.opts.logger.debug({ blobId, err: (err as Error).message }, 'announcing a blob in the DHT failed') },
        })
      : undefined;
    this.blobs = new BlobService({ store: blobStore, peers: this.blobPeers?.source, isPinned: (blobId) => this.applications.isPinned(blobId) });
    this.namespaces = new NamespaceService({ governance: this.governance, identity: this.identity, clock });
    this.groups = new GroupService({ governance: this.governance, identity: this.identity, namespaces: this.namespaces });
    this.namespaceManage = new NamespaceManageService({ governance: this.governance, namespaces: this.namespaces, groups: this.groups, identity: this.identity, clock });
    this.accounts = new AccountService({
      store: this.store,
      identity: this.identity,
      clock,
      governance: this.governance,
      isInstalled: async (id) => (await this.applications.get(id)) !== null,
    });
    await this.accounts.load();
    this.settings = new SettingsService({ governance: this.governance, identity: this.identity });
    this.members = new MembersService({ governance: this.governance, identity: this.identity });
    this.owner = new OwnerService({ governance: this.governance, identity: this.identity });
    const network = this.network;
    this.invitations = new InvitationService({
      governance: this.governance,
      identity: this.identity,
      clock,
      store: this.store,
      remote: this.replicator,
      addresses: network ? () => network.addresses() : undefined,
    });
    // a deadline of 0 (or less) would fail every call at once: it means the default
    const callDeadlineMs = config.runtime.deadlineMs > 0 ? config.runtime.deadlineMs : undefined;
    this.runtime = new WasmRuntime({
      blobs: blobAccess(this.blobs),
      sealing: identitySealing(this.identity),
      poolSize: config.runtime.workers,
      queueLimit: config.runtime.queueLimit,
      deadlineMs: callDeadlineMs,
    });
    this.contexts = createContexts({
      store: this.store,
      governance: this.governance,
      identity: this.identity,
      applications: this.applications,
      runtime: this.runtime,
      bus: this.bus,
      clock,
      onError: (err) => this.opts.logger.error({ err }, 'dropping the state of deleted contexts failed'),
      stampDelta: (delta) => this.sync?.stampDelta(delta) ?? {},
      callDeadlineMs,
      admission: new CallAdmission({
        contextCalls: config.runtime.contextPendingCalls,
        contextBytes: config.runtime.contextPendingBytes,
        totalCalls: config.runtime.pendingCalls,
        totalBytes: config.runtime.pendingBytes,
      }),
    });
    if (this.network && this.router) {
      const logger = this.opts.logger.child({ component: 'sync' });
      this.groupKeys = new GroupKeys({ store: this.store, governance: this.governance, account: this.identity.accountId, network: this.network, router: this.router, logger });
      this.sync = new ContextSync({
        records: this.contexts.records,
        executor: this.contexts.executor,
        locate: (id) => this.contexts.contexts.registration(id),
        identity: this.identity,
        network: this.network,
        router: this.router,
        keys: this.groupKeys,
        bus: this.bus,
        clock,
        logger,
      });
      this.contexts.contexts.attachSync(this.sync);
      const fetchLog = this.opts.logger.child({ component: 'app-fetch' });
      this.appFetch = new ApplicationFetch({
        records: this.contexts.records,
        applications: this.applications,
        blobs: bundleBlobsOf(this.blobs),
        locate: (id) => this.contexts.contexts.registration(id),
        now: () => clock.now(),
        // deltas that failed (or were quarantined) without the application are pulled and applied again
        onReady: (id) => {
          this.sync?.applier.forget(id);
          this.sync?.status.setPending(id, 0);
          this.sync?.syncNow(id);
        },
        onError: (err, what) => fetchLog.info({ ...what, err: (err as Error).message }, 'fetching an application from members did not succeed yet (retried)'),
      });
      this.contexts.contexts.attachAppFetch(this.appFetch);
      const followLog = this.opts.logger.child({ component: 'auto-follow' });
      this.autoFollow = new AutoFollow({
        governance: this.governance,
        contexts: this.contexts.contexts,
        records: this.contexts.records,
        store: this.store,
        bus: this.bus,
        account: this.identity.accountId,
        now: () => clock.now(),
        onPass: (r) => {
          if (r.joined.length + r.left.length > 0) followLog.info({ joined: r.joined, left: r.left, remaining: r.remaining }, 'auto-follow pass');
        },
        onError: (err, contextId) =>
          contextId
            ? followLog.warn({ err, contextId }, 'auto-follow could not join or leave a context (tried again on the next pass)')
            : followLog.error({ err }, 'an auto-follow pass failed (tried again on the next governance op or start)'),
      });
      this.specialized = new SpecializedInvites({
        network: this.network,
        router: this.router,
        identity: this.identity,
        contexts: this.contexts.contexts,
        invitations: this.invitations,
        clock,
        logger,
        config: config.specialized,
      });
    }
    // contexts whose group went away while the node was down, then every later deletion
    const dropped = await this.contexts.reaper.sweep();
    if (dropped.length > 0) this.opts.logger.info({ contexts: dropped }, 'dropped the local state of contexts whose group was deleted');
    this.contexts.reaper.start();
    this.tee = new TeeService({ backend: await loadTeeBackend(config.tee.provider, paths.dir), identity: this.identity, applications: this.applications });
    this.upgrades = new UpgradeService({
      store: this.store,
      governance: this.governance,
      contexts: this.contexts,
      applications: this.applications,
      identity: this.identity,
      bus: this.bus,
      clock,
      onError: (err) => this.opts.logger.error({ err }, 'migration failed'),
    });
    // a migration waiting for the target version here resumes once it is installed
    this.applications.onInstalled((r) => void this.upgrades.bundleInstalled(r.bundleBlobId).catch((err: unknown) => this.opts.logger.error({ err }, 'resuming migrations failed')));
    this.intents = new IntentService({ store: this.store, contexts: this.contexts, applications: this.applications, identity: this.identity, clock });
    this.groupIntents = new GroupIntentService({ governance: this.governance, contexts: this.contexts, identity: this.identity, clock });
    this.signingKeys = new SigningKeyService({ store: this.store, governance: this.governance, identity: this.identity, clock });
    this.presence = new PresenceService({ bus: this.bus, clock });
    this.presenceIntents = new PresenceIntentService({ presence: this.presence, clock, locateContext: (id) => this.contexts.contexts.registration(id) });
    this.events = new EventStreamService({
      bus: this.bus,
      presence: this.presence,
      clock,
      observe: {
        groupKnown: (id) => this.governance.locate(id) !== undefined,
        groupPath: groupPathVia((id) => this.governance.locate(id)),
        contextApplication: contextApplicationVia((id) => this.contexts.contexts.get(id)),
      },
      onDrop: (info) => this.opts.logger.info(info, 'event stream connection dropped'),
    });
  }

  /** Readies the runtime with the modules of this node's contexts, as many as it keeps compiled (prepare.ts). */
  private async prepareContexts(): Promise<PrepareOutcome> {
    const metas = await this.contexts.records.listMeta();
    const entries = metas.map((meta) => ({ key: `${meta.bundleBlobId ?? meta.applicationId}:${meta.serviceName ?? ''}`, prepare: () => this.contexts.executor.prepare(meta) }));
    const onError = (key: string, err: unknown) => this.opts.logger.warn({ err, module: key }, 'preparing a context’s module failed');
    return prepareModules(entries, { limit: DEFAULT_MODULE_CACHE_SIZE, budgetMs: PREPARE_BUDGET_MS, onError });
  }

  async start(): Promise<void> {
    const { config, logger } = this.opts;
    const clock = this.opts.clock ?? systemClock;
    await this.open();
    try {
      await this.ensureAdmin();
      this.metrics.addGauge(storeSizeGauge({ data: this.opts.paths.data, blobs: this.opts.paths.blobs }));
      // the node's name (its home's, `--node`), so the dashboard's overview can say which node this is
      this.metrics.addGauge({ name: 'hearth_node_info', help: 'This node: its name', read: () => [{ labels: { name: config.node.name }, value: 1 }] });
      if (this.network) registerNetworkMetrics(this.metrics, this.network);
      if (this.replicator) for (const series of replicationSeries(this.replicator.stats)) this.metrics.addGauge(series);
      for (const series of this.blobPeers?.series() ?? []) this.metrics.addGauge(series);
      for (const series of this.blobs.store.quota.series()) this.metrics.addGauge(series);
      for (const series of [...this.runtime.series(), ...this.compactor.series()]) this.metrics.addGauge(series);
      const applyFailures = this.sync?.applier.failures;
      if (applyFailures) {
        this.metrics.addGauge({
          name: 'hearth_sync_apply_failures_total',
          help: 'Remote deltas whose merge failed, by outcome (retried: retries scheduled; recovered: applied by a retry; exhausted, quarantined: quarantined after retries, or at once)',
          type: 'counter',
          read: () => Object.entries(applyFailures).map(([outcome, value]) => ({ labels: { outcome }, value })),
        });
      }
      for (const series of this.contexts.executor.admission.series()) this.metrics.addGauge(series);
      this.metrics.addGauge({
        name: 'hearth_event_streams_active',
        help: 'Open event-stream connections by transport',
        read: () => Object.entries(this.events.activeStreams()).map(([transport, value]) => ({ labels: { transport }, value })),
      });
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
          return registerRoutes(app, {
            catalogue,
            delegatedAccess: config.admin.delegatedAccess,
            metrics: this.metrics,
            store: this.store,
            lifecycle: () => this.state,
            // a standalone node (no network) answers 0, as the reference without a swarm
            peerCount: () => this.network?.peerCount() ?? 0,
            network: {
              status: () => this.network?.status(),
              peerId: libp2pPeerIdOf(this.identity.publicKey),
              replication: this.replicator ? () => replicationView(this.replicator!) : undefined,
            },
            blobs: { blobs: this.blobs },
            events: {
              stream: this.events,
              rpcMethods: () => contextRpcMethods(this.contexts),
              presenceIntents: this.presenceIntents,
            },
            contexts: {
              ...this.contexts,
              onRpcOutcome: (outcome) => this.metrics.jsonrpc(outcome),
              rpcMethods: presenceRpcMethods(this.presence, { ownIdentity: (id) => this.contexts.contexts.ownIdentity(id) }),
            },
            applications: { applications: this.applications },
            devBundle: { keyPath: join(this.opts.paths.dir, DEV_SIGNING_KEY_FILE), devInstallRoot: config.applications.devInstallRoot || undefined },
            tee: { tee: this.tee },
            signingKeys: { signingKeys: this.signingKeys },
            upgrades: { upgrades: this.upgrades },
            delegation: { intents: this.intents, groupIntents: this.groupIntents },
            sync: { specialized: this.specialized },
            governance: {
              governance: this.governance,
              identity: this.identity,
              clock,
              namespaces: this.namespaces,
              groups: this.groups,
              namespaceManage: this.namespaceManage,
              accounts: this.accounts,
              settings: this.settings,
              members: this.members,
              owner: this.owner,
              invitations: this.invitations,
              sync: this.replicator,
              contextUsage: (id) => this.contexts.contexts.usage(id),
              // GroupInfo `activeUpgrade`: the group's upgrade while it is in progress on this node
              groupInfoFields: { activeUpgrade: { schema: GroupUpgradeStatus, read: (groupId) => this.upgrades.activeUpgrade(groupId) } },
            },
            auth: {
              auth: this.auth,
              keys: this.keys,
              store: this.store,
              clock,
              startedAt: clock.now(),
              development: config.node.development,
              version: VERSION,
              allowedCallbackOrigins: config.auth.allowedCallbackOrigins,
            },
          });
        },
      });
      const host = this.opts.host ?? config.server.host;
      // Workers warm up in the background: readiness does not wait for them, and a call that
      // arrives first waits for a free worker (the runtime counts a loading worker as busy).
      this.runtime.start().catch((err: unknown) => logger.error({ err }, 'WebAssembly runtime failed to start'));
      // the contexts' modules compiled and a worker readied while the rest starts, waited for (at
      // most 2 s) before listening, so the first call after a restart does not pay for them
      // (issue #22; prepare.ts; docs/runtime.md "First call after a start")
      const prepared = this.prepareContexts().catch((err: unknown) => void logger.warn({ err }, 'preparing the contexts’ modules failed'));
      this.supervisor = new StoreSupervisor({ store: this.store, logger, onFatal: this.opts.onFatal ?? (() => void this.stop()) });
      this.supervisor.start();
      this.compactor.start();
      this.presence.start();
      this.events.start();
      await this.network?.start();
      this.router?.serve();
      this.blobPeers?.start();
      this.replicator?.start();
      this.groupKeys?.start();
      await this.sync?.start();
      this.appFetch?.start();
      this.autoFollow?.start();
      this.specialized?.start();
      await this.upgrades.start();
      const ready = await prepared;
      if (ready?.timedOut) logger.info(ready, 'the contexts’ modules are still being prepared: listening meanwhile');
      await this.app.listen({ host, port: this.opts.port ?? config.server.port });
      const addr = this.app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
      this.listening = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      this.state = 'ready';
    } catch (err) {
      await this.app?.close().catch(() => undefined);
      await this.autoFollow?.stop().catch(() => undefined);
      await this.sync?.stop().catch(() => undefined);
      this.groupKeys?.stop();
      await this.replicator?.stop().catch(() => undefined);
      await this.network?.stop().catch(() => undefined);
      await this.runtime?.stop().catch(() => undefined);
      await this.store.close().catch(() => undefined);
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

  /** Readiness flips first, then in-flight requests drain, then the store closes. */
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

  async stop(): Promise<void> {
    if (this.state === 'shutting_down') return;
    this.state = 'shutting_down';
    this.supervisor?.stop();
    this.compactor.stop();
    this.contexts?.reaper.stop();
    // Streams end with a close frame first: open SSE responses would otherwise hold the drain.
    this.events?.stop();
    this.presence?.stop();
    await this.drainHttp();
    await this.upgrades?.stop();
    this.appFetch?.stop();
    this.blobPeers?.stop();
    this.specialized?.stop();
    await this.autoFollow?.stop();
    await this.sync?.stop();
    this.groupKeys?.stop();
    await this.replicator?.stop();
    await this.network?.stop();
    await this.runtime?.stop();
    await this.store.close();
  }
}
