// The lock file must list every optional dependency of every locked package, or `npm ci` (what
// `.ci/run` does first) refuses the install before a single test runs. This registry does not
// serve every platform's prebuilt binary (the QUIC transport's macOS and Windows packages answer
// 404), so `npm install` here silently leaves them out of the lock; their entries are written
// by hand with os/cpu/libc, which `npm ci` on Linux x64 skips without fetching.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  version?: string;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

/** Where npm would resolve `name` from the package at `from`: nested first, then up the tree. */
function resolve(from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

describe('package-lock.json', () => {
  it('lists every optional dependency of every locked package', () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!path.includes('node_modules/')) continue;
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (!resolve(path, name)) missing.push(`${path} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('marks the hand-written platform entries optional and platform-bound', () => {
    const quic = Object.entries(lock.packages).filter(([p]) =>
      p.startsWith('node_modules/@chainsafe/libp2p-quic-'),
    );
    expect(quic.length).toBeGreaterThanOrEqual(7);
    for (const [, entry] of quic) {
      expect(entry.optional).toBe(true);
      expect(entry.os?.length).toBe(1);
      expect(entry.cpu?.length).toBe(1);
    }
  });
});
