/**
 * The layers read downward (issues #26, #35; docs/architecture.md): this walks every import under
 * src/ (type-only ones too) and fails on one that reaches up. The rank table (FLOORS) gives each
 * folder its floor: a source file imports its own folder and lower floors only, and the few imports
 * that still run up are named in UPWARD, each with its reason. A domain (DOMAINS) is imported from
 * another folder only through its face, index.ts; the imports that stay are named in INNER. Beside it,
 * src/network/boundary.test.ts keeps libp2p inside src/network/.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = import.meta.dirname;

/** One import: the importing file and the imported one, both relative to src/ with `/` separators. */
interface Edge {
  from: string;
  to: string;
}

/**
 * The rank table: each folder of src/ (or top-level module) and its floor, read from the imports as
 * they stand (issue #35). 0 imports nothing of src/; a folder's floor is above every folder it
 * imports, except through an UPWARD import. A new folder gets its row here.
 */
const FLOORS: Record<string, number> = {
  // the base: nothing of src/, or only the base (the SDK package ships wire/ and codec/json.ts)
  wire: 0,
  'errors.ts': 0,
  'clock.ts': 0,
  'version.ts': 0,
  'errno-text.ts': 0,
  'schedule.ts': 0,
  'serial.ts': 0,
  'abort.ts': 0,
  'abort-watch.ts': 0,
  'bus.ts': 0,
  config: 0,
  dashboard: 0,
  crypto: 1,
  codec: 1,
  store: 1,
  // the HTTP frame (knows no domain) and the SDK (knows no server)
  http: 2,
  client: 2,
  // the node identity and the device proofs that verify from their bytes alone (accounts/ and governance/ both read them)
  identity: 2,
  // the domains, lowest first
  aliases: 3,
  auth: 3,
  network: 3,
  blobs: 4,
  governance: 4,
  runtime: 5,
  accounts: 5,
  applications: 6,
  contexts: 7,
  tee: 7,
  events: 8,
  upgrades: 8,
  delegation: 8,
  sync: 9,
  // the composition root, then the CLI side: src/cli/ (with src/cli/workflow/, `hearth workflow run`, which drives nodes through the SDK)
  node: 10,
  cli: 11,
  'main.ts': 12,
};

/** The imports that still run up the floors (a file, or every file of a folder, to a folder or file), each with why. */
const UPWARD: { from: string; to: string; why: string }[] = [];

const rankKey = (path: string): string => (path.includes('/') ? path.slice(0, path.indexOf('/')) : path);
const isUpwardNamed = ({ from, to }: Edge): boolean => UPWARD.some((u) => from.startsWith(u.from) && to.startsWith(u.to));

/** Modules every layer may use: the top-level modules (errors, clock, version, ...) and these folders. */
const BASE_DIRS = ['codec', 'config', 'crypto', 'store', 'wire'];

/** Domains built on governance: governance imports none of them (they register ops with it from src/node/). */
const BUILT_ON_GOVERNANCE = ['sync', 'upgrades', 'delegation'];

const folderOf = (path: string): string | undefined => (path.includes('/') ? path.slice(0, path.indexOf('/')) : undefined);
const isBase = (path: string): boolean => {
  const folder = folderOf(path);
  return folder === undefined ? path !== 'main.ts' : BASE_DIRS.includes(folder);
};

/** The rules, one sentence each; an edge that breaks one is reported as `from → to (rule)`. */
const RULES: { rule: string; breaks: (e: Edge) => boolean }[] = [
  {
    // src/cli/workflow/ (`hearth workflow run`) drives nodes through the SDK as the other commands do
    rule: 'only the SDK itself and the CLI (src/cli/) import src/client/',
    breaks: ({ from, to }) => folderOf(to) === 'client' && !['client', 'cli'].includes(folderOf(from) ?? ''),
  },
  {
    rule: 'the SDK imports nothing of the server: only src/client/, the neutral src/codec/, the wire vocabulary src/wire/ and src/abort.ts',
    breaks: ({ from, to }) => folderOf(from) === 'client' && !['client', 'codec', 'wire'].includes(folderOf(to) ?? '') && to !== 'abort.ts',
  },
  {
    rule: 'src/wire/ (the wire vocabulary the server and the SDK share) imports nothing else of src/',
    breaks: ({ from, to }) => folderOf(from) === 'wire' && folderOf(to) !== 'wire',
  },
  {
    // the SDK package ships codec/json.ts; borsh.ts (the node's signed layouts) answers bad bytes with a 400
    rule: 'src/codec/json.ts is neutral: it imports nothing else of src/',
    breaks: ({ from, to }) => from === 'codec/json.ts' && folderOf(to) !== 'codec',
  },
  {
    rule: 'src/http/ imports no domain: only itself and the base modules',
    breaks: ({ from, to }) => folderOf(from) === 'http' && folderOf(to) !== 'http' && !isBase(to),
  },
  {
    rule: 'src/governance/ imports none of the domains built on it (sync, upgrades, delegation)',
    breaks: ({ from, to }) => folderOf(from) === 'governance' && BUILT_ON_GOVERNANCE.includes(folderOf(to) ?? ''),
  },
  {
    rule: 'the composition root src/node/ is imported only by the entry points (main.ts, src/cli/)',
    breaks: ({ from, to }) => folderOf(to) === 'node' && folderOf(from) !== 'node' && folderOf(from) !== 'cli' && from !== 'main.ts',
  },
];

/**
 * The domains: each owns a part of the node behind its face, `index.ts` (issue #35). The rest of src/ is
 * building blocks any layer may import file by file: the base (top-level modules, wire/, config/, crypto/,
 * codec/, store/), identity/ (proofs that verify from their bytes alone), http/ (the HTTP frame, no domain),
 * dashboard/ (the static dashboard files, one module), and the SDK client/ and the CLI cli/ (their own rules above).
 */
const DOMAINS = ['accounts', 'aliases', 'applications', 'auth', 'blobs', 'contexts', 'delegation', 'events', 'governance', 'network', 'runtime', 'sync', 'tee', 'upgrades'];

/** The imports into a domain's inner files from another folder that stay, each with why. */
const INNER: { from: string; to: string; why: string }[] = [
  {
    from: 'node/credentials.ts',
    to: 'auth/passwords.ts',
    why: "the CLI loads node/credentials.ts in every command: auth's face would load the whole auth domain into each",
  },
  {
    from: 'applications/wasm.ts',
    to: 'runtime/wasm-binary.ts',
    why: "the CLI (`hearth app`, `hearth workflow run`) loads applications/wasm.ts: runtime's face would load the runtime domain into it",
  },
  { from: 'delegation/nonces.ts', to: 'governance/types.ts', why: 'a state augmentation (`declare module`) names the module that declares the interface' },
  { from: 'upgrades/types.ts', to: 'governance/types.ts', why: 'a state augmentation (`declare module`) names the module that declares the interface' },
];

const isTest = (path: string): boolean => path.endsWith('.test.ts') || path.endsWith('.test.tsx');
const isInnerNamed = ({ from, to }: Edge): boolean => INNER.some((u) => from === u.from && to === u.to);

RULES.push(
  {
    // tests may set up a domain's inner parts; the CLI imports applications/ and node/ as its own rules say
    rule: 'a domain and the composition root src/node/ import another domain only through its face (index.ts), or an import named in INNER',
    breaks: (e) => {
      const [from, to] = [folderOf(e.from) ?? '', folderOf(e.to) ?? ''];
      if (isTest(e.from) || from === to || !DOMAINS.includes(to) || !(DOMAINS.includes(from) || from === 'node')) return false;
      // a testkit (test support) is no part of a face: the face would load test code into the node
      return e.to !== `${to}/index.ts` && !e.to.endsWith('/testkit.ts') && !isInnerNamed(e);
    },
  },
  {
    // the face imports the domain's files: one that imported the face back would close a circle (a testkit builds
    // the domain through its face for tests and is imported by no face)
    rule: "a domain's own files do not import its face",
    breaks: (e) => !isTest(e.from) && !e.from.endsWith('/testkit.ts') && DOMAINS.includes(folderOf(e.from) ?? '') && e.to === `${folderOf(e.from)}/index.ts` && e.from !== e.to && folderOf(e.to) === folderOf(e.from),
  },
);

RULES.push({
  rule: 'a source file imports its own folder and lower floors of the rank table only, or an import named in UPWARD (tests may set up the domains above their own)',
  breaks: (e) => {
    if (e.from.endsWith('.test.ts') || e.from.endsWith('.test.tsx')) return false;
    const from = FLOORS[rankKey(e.from)];
    const to = FLOORS[rankKey(e.to)];
    if (rankKey(e.from) === rankKey(e.to)) return false;
    if (from === undefined || to === undefined) return true; // a folder without a row in the rank table
    return to >= from && !isUpwardNamed(e);
  },
});

export function violations(edges: Edge[]): string[] {
  return edges.flatMap((e) => RULES.filter((r) => r.breaks(e)).map((r) => `${e.from} → ${e.to} (${r.rule})`));
}

/**
 * `import … from`, `export … from`, side-effect `import '…'`, `import('…')` and a state augmentation
 * (`declare module '…'`): the relative specifiers.
 */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|\bdeclare module\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(path)));
    else if (/\.(ts|tsx)$/.test(e.name)) out.push(path);
  }
  return out;
}

const toSrc = (path: string): string => relative(SRC, path).split(sep).join('/');

async function importEdges(): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const file of await sources(SRC)) {
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), m[1]);
      // an import out of src/ (test/helpers from a test) is no layer of the node
      if (relative(SRC, target).startsWith('..')) continue;
      edges.push({ from: toSrc(file), to: toSrc(target) });
    }
  }
  return edges;
}

describe('the layers', () => {
  it('sees the imports it judges', async () => {
    const edges = await importEdges();
    // a walker that found nothing would pass every rule: these imports are known to be there
    expect(edges).toContainEqual({ from: 'node/node.ts', to: 'sync/index.ts' });
    expect(edges).toContainEqual({ from: 'http/body.ts', to: 'codec/json.ts' });
    expect(edges).toContainEqual({ from: 'upgrades/types.ts', to: 'governance/types.ts' }); // the state augmentation
  });

  it('has no import that reaches up', async () => {
    expect(violations(await importEdges())).toEqual([]);
  });

  it('names in UPWARD only imports that are there and run up', async () => {
    const edges = (await importEdges()).filter((e) => !e.from.endsWith('.test.ts'));
    const stale = UPWARD.filter((u) => !edges.some((e) => e.from.startsWith(u.from) && e.to.startsWith(u.to) && FLOORS[rankKey(e.to)]! >= FLOORS[rankKey(e.from)]!));
    expect(stale).toEqual([]);
  });

  it('names in INNER only imports that are there', async () => {
    const edges = await importEdges();
    expect(INNER.filter((u) => !edges.some((e) => e.from === u.from && e.to === u.to))).toEqual([]);
  });

  it('ranks every folder of src/', async () => {
    const unranked = new Set((await importEdges()).flatMap((e) => [rankKey(e.from), rankKey(e.to)]).filter((k) => !k.endsWith('.test.ts') && FLOORS[k] === undefined));
    expect([...unranked]).toEqual([]);
  });

  it.each([
    ['contexts/calls.ts', 'client/json.ts'],
    ['client/http.ts', 'errors.ts'],
    ['codec/json.ts', 'errors.ts'],
    ['wire/index.ts', 'codec/json.ts'],
    ['client/settings.ts', 'governance/types.ts'],
    ['http/routes.ts', 'sync/routes.ts'],
    ['http/guard.ts', 'auth/service.ts'],
    ['http/app.ts', 'main.ts'],
    ['governance/ops.ts', 'upgrades/ops.ts'],
    ['governance/types.ts', 'delegation/nonces.ts'],
    ['governance/ops.ts', 'sync/keys.ts'],
    ['sync/service.ts', 'node/node.ts'],
    ['governance/log.ts', 'contexts/service.ts'],
    ['crypto/seal.ts', 'governance/types.ts'],
    ['config/defaults.ts', 'runtime/limits.ts'],
    ['contexts/service.ts', 'sync/service.ts'],
    ['contexts/service.ts', 'sync/status.ts'],
    ['contexts/service.ts', 'delegation/ops.ts'],
    ['governance/ops.ts', 'contexts/ops.ts'],
    ['governance/route-deps.ts', 'accounts/service.ts'],
    ['newfolder/x.ts', 'errors.ts'],
    ['node/routes.ts', 'upgrades/routes.ts'],
    ['upgrades/ops.ts', 'governance/appliers.ts'],
    ['accounts/service.ts', 'governance/log.ts'],
    ['sync/service.ts', 'contexts/types.ts'],
    ['governance/log.ts', 'governance/index.ts'],
  ])('refuses %s → %s', (from, to) => {
    expect(violations([{ from, to }])).not.toEqual([]);
  });

  it.each([
    ['cli/call.ts', 'client/index.ts'],
    ['cli/workflow/steps/calls.ts', 'client/index.ts'],
    ['client/http.ts', 'codec/json.ts'],
    ['client/settings.ts', 'wire/capabilities.ts'],
    ['governance/types.ts', 'wire/capabilities.ts'],
    ['http/body.ts', 'errors.ts'],
    ['http/limits.ts', 'config/defaults.ts'],
    ['node/routes.ts', 'upgrades/index.ts'],
    ['upgrades/ops.ts', 'governance/index.ts'],
    ['main.ts', 'node/node.ts'],
    ['cli/commands/app.ts', 'applications/bundle.ts'],
    ['sync/service.ts', 'http/metrics.ts'],
    ['sync/testkit.ts', 'contexts/testkit.ts'],
    ['governance/log.ts', 'bus.ts'],
    ['accounts/service.ts', 'governance/index.ts'],
    ['governance/log.ts', 'identity/identity.ts'],
    ['contexts/auto-follow.test.ts', 'sync/testkit.ts'],
  ])('allows %s → %s', (from, to) => {
    expect(violations([{ from, to }])).toEqual([]);
  });
});

describe('the rooms', () => {
  // issue #35: a source file past 500 lines is a file doing two things (style.md); tests may be longer
  it('keeps every source file of src/ (tests aside) at 500 lines or fewer', async () => {
    const long: string[] = [];
    for (const file of await sources(SRC)) {
      if (isTest(toSrc(file))) continue;
      const lines = (await readFile(file, 'utf8')).split('\n').length - 1;
      if (lines > 500) long.push(`${toSrc(file)}: ${lines}`);
    }
    expect(long).toEqual([]);
  });
});
