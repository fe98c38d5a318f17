/**
 * The composition root: builds every component from the configuration and starts and stops them
 * in order (store → services → HTTP), so SIGTERM drains requests before the store closes.
 */
import { createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { KeysService } from '../auth/keys-service.ts';
import { AuthService } from '../auth/service.ts';
import { KeyStore } from '../auth/store.ts';
import { TokenIssuer } from '../auth/tokens.ts';
import { BlobService } from '../blobs/service.ts';
import { BlobStore } from '../blobs/store.ts';
import { createApplications } from '../applications/factory.ts';
import type { ApplicationService } from '../applications/service.ts';
import { NodeIdentity } from '../accounts/identity.ts';
import { systemClock, unixSecs, type Clock } from '../clock.ts';
import { EventBus } from '../events/bus.ts';
import { PresenceService } from '../events/presence.ts';
import { EventStreamService } from '../events/service.ts';
import { contextApplicationVia } from '../events/access.ts';
import { presenceRpcMethods } from '../events/presence-rpc.ts';
import { PresenceIntentService } from '../events/presence-intents.ts';
import { contextRpcMethods, createContexts, type Contexts } from '../contexts/index.ts';
import { WasmRuntime } from '../runtime/runtime.ts';
import { blobAccess } from '../runtime/blob-access.ts';
import { identitySealing } from '../runtime/sealing.ts';
import { GroupService } from '../governance/groups/service.ts';
import { MembersService } from '../governance/groups/members-service.ts';
import { Governance } from '../governance/log.ts';
import { NamespaceService } from '../governance/namespaces/service.ts';
import { NamespaceManageService } from '../governance/namespaces/manage-service.ts';
import { AccountService } from '../accounts/service.ts';
import { createAppliers } from '../governance/ops.ts';
import { OwnerService } from '../governance/owner/service.ts';
import { InvitationService } from '../governance/invitations/service.ts';
import { SettingsService } from '../governance/settings/service.ts';
import type { NodeConfig } from '../config/config.ts';
import { readSecret, type HomePaths } from '../config/home.ts';
import { buildApp, type App } from '../http/app.ts';
import type { RouteCatalogue, RouteRecord } from '../http/openapi.ts';
import type { Lifecycle } from '../http/health-routes.ts';
import { registerRoutes } from '../http/routes.ts';
import { Metrics, storeSizeGauge } from '../http/metrics.ts';
import { LevelStore } from '../store/level.ts';
import type { Store } from '../store/store.ts';
import { VERSION } from '../version.ts';
import { AdminMissingError } from './credentials.ts';

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
}

export { AdminMissingError };

/** how long a stopping node waits for requests in flight before closing every connection */
const DRAIN_DEADLINE_MS = 5_000;

export class HearthNode {
  private state: Lifecycle = 'starting';
  private app?: App;
  private catalogue?: RouteCatalogue;
  private listening?: string;
  readonly store: Store;
  readonly keyStore: KeyStore;
  readonly metrics = new Metrics();
  auth!: AuthService;
  keys!: KeysService;
  blobs!: BlobService;
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
  /** contexts: lifecycle, method calls (JSON-RPC `execute`, query) */
  contexts!: Contexts;
  /** relayed, device-signed presence (`POST /contexts/{id}/presence-intents`) */
  presenceIntents!: PresenceIntentService;
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
    const blobStore = new BlobStore(this.store, paths.blobs, { now: () => clock.now() });
    await blobStore.open();
    this.applications = createApplications({ store: this.store, blobs: blobStore, config, now: () => clock.now() });
    this.blobs = new BlobService({ store: blobStore, isPinned: (blobId) => this.applications.isPinned(blobId) });
    this.identity = await NodeIdentity.load(this.store, createPrivateKey(await readFile(paths.nodeKey)), clock.now());
    this.governance = new Governance({ store: this.store, identity: this.identity, clock, bus: this.bus, appliers: createAppliers() });
    await this.governance.load();
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
    this.invitations = new InvitationService({ governance: this.governance, identity: this.identity, clock, store: this.store });
    this.runtime = new WasmRuntime({ blobs: blobAccess(this.blobs), sealing: identitySealing(this.identity) });
    this.contexts = createContexts({
      store: this.store,
      governance: this.governance,
      identity: this.identity,
      applications: this.applications,
      runtime: this.runtime,
      bus: this.bus,
      clock,
    });
    this.presence = new PresenceService({ bus: this.bus, clock });
    this.presenceIntents = new PresenceIntentService({ presence: this.presence, clock, locateContext: (id) => this.contexts.contexts.registration(id) });
    this.events = new EventStreamService({
      bus: this.bus,
      presence: this.presence,
      clock,
      observe: {
        groupKnown: (id) => this.governance.locate(id) !== undefined,
        contextApplication: contextApplicationVia((id) => this.contexts.contexts.get(id)),
      },
      onDrop: (info) => this.opts.logger.info(info, 'event stream connection dropped'),
    });
  }

  async start(): Promise<void> {
    const { config, logger } = this.opts;
    const clock = this.opts.clock ?? systemClock;
    await this.open();
    try {
      await this.ensureAdmin();
      this.metrics.addGauge(storeSizeGauge({ data: this.opts.paths.data, blobs: this.opts.paths.blobs }));
      this.metrics.addGauge({
        name: 'hearth_event_streams_active',
        help: 'Open event-stream connections by transport',
        read: () => Object.entries(this.events.activeStreams()).map(([transport, value]) => ({ labels: { transport }, value })),
      });
      this.app = await buildApp({
        logger,
        corsAllowedOrigins: config.server.corsAllowedOrigins,
        metrics: this.metrics,
        routes: (app, catalogue) => {
          this.catalogue = catalogue;
          return registerRoutes(app, {
            catalogue,
            metrics: this.metrics,
            store: this.store,
            lifecycle: () => this.state,
            // No libp2p swarm in this release: a standalone node, which the reference answers with 0.
            peerCount: () => 0,
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
      this.presence.start();
      this.events.start();
      await this.app.listen({ host, port: this.opts.port ?? config.server.port });
      const addr = this.app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
      this.listening = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      this.state = 'ready';
    } catch (err) {
      await this.app?.close().catch(() => undefined);
      await this.runtime?.stop().catch(() => undefined);
      await this.store.close().catch(() => undefined);
      throw err;
    }
  }

  private async ensureAdmin(): Promise<void> {
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
    // Streams end with a close frame first: open SSE responses would otherwise hold the drain.
    this.events?.stop();
    this.presence?.stop();
    await this.drainHttp();
    await this.runtime?.stop();
    await this.store.close();
  }
}
