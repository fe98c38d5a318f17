/**
 * What the CLI remembers per profile and node (issue #25 §3): the context, namespace and
 * application last created or used, which `@last` names (`hearth use <kind> <ref>` sets one).
 * Kept in `<root>/profiles/<profile>.recent` (0600, written through a temporary file and a rename),
 * apart from the profile's tokens so that remembering an id can never overwrite a token pair
 * another `hearth` process just rotated. Keyed by node URL: an id remembered on one node means
 * nothing on another.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const REMEMBERED_KINDS = ['context', 'namespace', 'application'] as const;
export type RememberedKind = (typeof REMEMBERED_KINDS)[number];

export type Recent = Partial<Record<RememberedKind, string>>;

export class RecentRefs {
  private readonly path: string;

  constructor(
    private readonly profilesDir: string,
    profile: string,
  ) {
    this.path = join(profilesDir, `${profile}.recent`);
  }

  private async readAll(): Promise<Record<string, Recent>> {
    try {
      const v = JSON.parse(await readFile(this.path, 'utf8')) as unknown;
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Recent>) : {};
    } catch {
      return {}; // none yet, or unreadable: nothing remembered
    }
  }

  async get(node: string): Promise<Recent> {
    const entry = (await this.readAll())[node] ?? {};
    const out: Recent = {};
    for (const k of REMEMBERED_KINDS) if (typeof entry[k] === 'string' && /^[0-9a-f]{64}$/.test(entry[k]!)) out[k] = entry[k];
    return out;
  }

  /** Merges `update` into what is remembered for `node` (read, modify, atomic write). */
  async set(node: string, update: Recent): Promise<void> {
    if (!Object.keys(update).length) return;
    const all = await this.readAll();
    all[node] = { ...(all[node] ?? {}), ...update };
    await mkdir(this.profilesDir, { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.tmp-${process.pid}`;
    await writeFile(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, this.path);
  }
}
