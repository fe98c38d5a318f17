/**
 * Drives the operator CLI against a running test node: each call spawns the compiled `hearth` command with
 * a private home root (profiles live there) and `--node <url>`, like a user on another terminal. Also the
 * CLI tests' common start: a test node with the SDK and a CLI user logged in as its admin, and a test
 * application installed with a namespace founded for it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../src/client/index.ts';
import { makeBundle } from './bundles.ts';
import { runCli, startTestNode, type TestNode, type TestNodeOptions } from './node.ts';
import { buildTestApp } from './wasm-apps.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class CliUser {
  private constructor(
    readonly root: string,
    readonly nodeUrl: string,
  ) {}

  static async create(nodeUrl: string): Promise<CliUser> {
    return new CliUser(await mkdtemp(join(tmpdir(), 'hearth-cli-user-')), nodeUrl);
  }

  /** `hearth <args> --home <root> --node <url>` (connection flags added unless `bare`). */
  run(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; bare?: boolean } = {}): Promise<CliResult> {
    const connect = opts.bare ? [] : ['--home', this.root, '--node', this.nodeUrl];
    return runCli([...args, ...connect], { HEARTH_PROFILE: '', HEARTH_NODE: '', HEARTH_PASSWORD: '', ...opts.env }, { input: opts.input });
  }

  /** Runs with `--output json`, expects exit 0 and returns the parsed stdout. */
  async json<T = any>(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<T> {
    const res = await this.run([...args, '--output', 'json'], opts);
    expect(res.code, `hearth ${args.join(' ')} failed: ${res.stderr}`).toBe(0);
    return JSON.parse(res.stdout) as T;
  }

  /** Runs in human mode, expects exit 0 and returns stdout. */
  async human(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
    const res = await this.run(args, opts);
    expect(res.code, `hearth ${args.join(' ')} failed: ${res.stderr}`).toBe(0);
    return res.stdout;
  }

  /** `hearth profile list --output json` on this user's home root. */
  async profiles(): Promise<{ profile: string; node: string | null; username: string | null; loggedIn: boolean }[]> {
    const res = await this.run(['profile', 'list', '--home', this.root, '--output', 'json'], { bare: true });
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout);
  }

  /** Logs the default profile in with the password on stdin. */
  async login(username: string, password: string): Promise<void> {
    await this.human(['login', '--username', username, '--password-stdin'], { input: `${password}\n` });
  }

  destroy(): Promise<void> {
    return rm(this.root, { recursive: true, force: true });
  }
}

/** A test node, the SDK logged in as its admin, and a CLI user logged in as its admin too. */
export interface CliNode {
  node: TestNode;
  sdk: Client;
  user: CliUser;
  /** stops the node and removes the CLI user's home root */
  destroy(): Promise<void>;
}

/** The SDK on `node`, logged in as its admin. */
export async function adminSdk(node: TestNode): Promise<Client> {
  const sdk = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await sdk.auth.login({ username: node.adminUser, password: node.adminPassword });
  return sdk;
}

/** Starts a test node with the SDK and a CLI user logged in as its admin: where a CLI test starts. */
export async function startCliNode(opts: TestNodeOptions = {}): Promise<CliNode> {
  const node = await startTestNode(opts);
  const sdk = await adminSdk(node);
  const user = await CliUser.create(node.url);
  await user.login(node.adminUser, node.adminPassword);
  return {
    node,
    sdk,
    user,
    destroy: async () => {
      await user.destroy();
      await node.destroy();
    },
  };
}

/** Installs the test app `app` (test/apps/<app>.ts) as a dev bundle of `pkg` and founds a namespace for it. */
export async function installTestApp(sdk: Client, app: string, pkg: string): Promise<{ appId: string; ns: string; bundlePath: string }> {
  const bundle = await makeBundle({ wasm: await buildTestApp(app), package: pkg });
  const appId = (await sdk.applications.installDev(bundle.path)).applicationId;
  const ns = (await sdk.namespaces.create({ applicationId: appId })).namespaceId;
  return { appId, ns, bundlePath: bundle.path };
}
