/**
 * The network's boundary (issue #12 §1): libp2p is imported only inside src/network/, and there
 * every module that imports it loads the Node 20 polyfill first.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const LIBP2P = /(?:from\s+|import\s*\(\s*|import\s+)['"](?:libp2p|@libp2p\/[^'"]+|@chainsafe\/libp2p-[^'"]+|@multiformats\/[^'"]+)['"]/;

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(path)));
    else if (/\.(ts|js|mjs)$/.test(e.name)) out.push(path);
  }
  return out;
}

describe('the network boundary', () => {
  it('keeps libp2p imports inside src/network/', async () => {
    const files = (await Promise.all(['src', 'test', 'bench', 'scripts', 'bin'].map((d) => sources(join(ROOT, d)).catch(() => [])))).flat();
    const outside: string[] = [];
    for (const f of files) {
      const rel = relative(ROOT, f);
      if (rel.startsWith(join('src', 'network'))) continue;
      if (LIBP2P.test(await readFile(f, 'utf8'))) outside.push(rel);
    }
    expect(outside).toEqual([]);
  });

  it('loads the polyfill before libp2p in every module that imports it', async () => {
    const late: string[] = [];
    for (const f of await sources(join(ROOT, 'src', 'network'))) {
      const text = await readFile(f, 'utf8');
      const first = text.search(LIBP2P);
      if (first < 0) continue;
      const polyfill = text.indexOf("import './polyfill.ts';");
      if (polyfill < 0 || polyfill > first) late.push(relative(ROOT, f));
    }
    expect(late).toEqual([]);
  });
});
