/**
 * Named connection profiles for the operator CLI (issue #6; product.md §10 "named node profiles"):
 * `<root>/profiles/<name>.json` holds the node URL, the user and the token pair. Files are 0600 in
 * a 0700 directory and written through a temporary file and a rename, so a refresh that races a
 * crash never leaves half a token pair. `<root>` is the node-home root (`--home`, `$HEARTH_HOME`,
 * `~/.hearth`), so one directory holds a machine's nodes and the profiles that reach them.
 */
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tokens, TokenStore } from '../client/index.ts';
import { UsageError } from './exit.ts';

export interface Profile {
  name: string;
  /** base URL of the node, e.g. `http://127.0.0.1:2528` */
  node?: string;
  username?: string;
  tokens?: Tokens;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class Profiles {
  readonly dir: string;

  constructor(root: string) {
    this.dir = join(root, 'profiles');
  }

  static checkName(name: string): string {
    if (!NAME.test(name)) throw new UsageError(`profile name "${name}": use 1-64 letters, digits, ".", "_" or "-"`);
    return name;
  }

  path(name: string): string {
    return join(this.dir, `${Profiles.checkName(name)}.json`);
  }

  async read(name: string): Promise<Profile> {
    let text: string;
    try {
      text = await readFile(this.path(name), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { name };
      throw err;
    }
    try {
      return { ...(JSON.parse(text) as Profile), name };
    } catch {
      throw new UsageError(`profile file ${this.path(name)} is not valid JSON; remove it with "hearth logout --profile ${name}"`);
    }
  }

  async write(profile: Profile): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const path = this.path(profile.name);
    const tmp = `${path}.tmp-${process.pid}`;
    await writeFile(tmp, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, path);
  }

  async remove(name: string): Promise<boolean> {
    try {
      await rm(this.path(name));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  async list(): Promise<Profile[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return Promise.all(names.filter((n) => NAME.test(n)).sort().map((n) => this.read(n)));
  }
}

/**
 * The SDK's token store backed by a profile file: the SDK writes a rotated pair after every
 * refresh, so a later command starts from the newest tokens. `get` re-reads the file, so when
 * another `hearth` process rotated the pair meanwhile, this one adopts it instead of spending the
 * already-used refresh token (which the node would treat as reuse and end the session).
 */
export class ProfileTokenStore implements TokenStore {
  constructor(
    private readonly profiles: Profiles,
    private profile: Profile,
  ) {}

  async get(): Promise<Tokens | null> {
    const onDisk = await this.profiles.read(this.profile.name);
    if (onDisk.node === this.profile.node && onDisk.tokens) this.profile = { ...this.profile, tokens: onDisk.tokens };
    return this.profile.tokens ?? null;
  }

  async set(tokens: Tokens): Promise<void> {
    this.profile = { ...this.profile, tokens };
    await this.profiles.write(this.profile);
  }

  async clear(): Promise<void> {
    const { tokens: _dropped, ...rest } = this.profile;
    this.profile = rest;
    await this.profiles.write(this.profile);
  }
}
