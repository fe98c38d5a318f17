/**
 * The composition root: builds every component from the configuration and starts and stops them
 * in order (store → services → HTTP), so SIGTERM drains requests before the store closes.
 */
import type { Logger } from 'pino';
import { KeysService } from '../auth/keys-service.ts';
import { AuthService } from '../auth/service.ts';
import { KeyStore } from '../auth/store.ts';
import { TokenIssuer } from '../auth/tokens.ts';
import { BlobService } from '../blobs/service.ts';
import { BlobStore } from '../blobs/store.ts';
import { systemClock, unixSecs, type Clock } from '../clock.ts';
import type { NodeConfig } from '../config/config.ts';
import { readSecret, type HomePaths } from '../config/home.ts';
import { buildApp, type App } from '../http/app.ts';
import type { Lifecycle } from '../http/health-routes.ts';
import { registerRoutes } from '../http/routes.ts';
import { LevelStore } from '../store/level.ts';
import type { Store } from '../store/store.ts';
import { VERSION } from '../version.ts';

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

export class AdminMissingError extends Error {
  override name = 'AdminMissingError';
}

export class HearthNode {
  private state: Lifecycle = 'starting';
  private app?: App;
  private listening?: string;
  readonly store: Store;
  readonly keyStore: KeyStore;
  auth!: AuthService;
  keys!: KeysService;
  blobs!: BlobService;

  constructor(private readonly opts: NodeOptions) {
    this.store = new LevelStore(opts.paths.data);
    this.keyStore = new KeyStore(this.store);
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
    this.blobs = new BlobService({ store: blobStore });
  }

  async start(): Promise<void> {
    const { config, logger } = this.opts;
    const clock = this.opts.clock ?? systemClock;
    await this.open();
    try {
      await this.ensureAdmin();
      this.app = await buildApp({
        logger,
        corsAllowedOrigins: config.server.corsAllowedOrigins,
        routes: (app) =>
          registerRoutes(app, {
            store: this.store,
            lifecycle: () => this.state,
            blobs: { blobs: this.blobs },
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
          }),
      });
      const host = this.opts.host ?? config.server.host;
      await this.app.listen({ host, port: this.opts.port ?? config.server.port });
      const addr = this.app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
      this.listening = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      this.state = 'ready';
    } catch (err) {
      await this.app?.close().catch(() => undefined);
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
    this.opts.logger.info({ username: admin.username }, 'admin account created');
  }

  /** Readiness flips first, then in-flight requests drain, then the store closes. */
  async stop(): Promise<void> {
    if (this.state === 'shutting_down') return;
    this.state = 'shutting_down';
    await this.app?.close();
    await this.store.close();
  }
}
