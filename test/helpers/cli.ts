/**
 * Drives the operator CLI against a running test node: each call spawns the compiled `hearth` command with
 * a private home root (profiles live there) and `--node <url>`, like a user on another terminal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from './node.ts';

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
