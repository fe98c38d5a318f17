/**
 * The SDK as documented (issue #25 §5): every TypeScript block of docs/sdk.md and
 * docs/quick-start.md is type-checked against the SDK's sources with the project's TypeScript, so
 * an example that stops compiling (e.g. `f.data.events` widened to `unknown` by a catch-all frame
 * variant) fails here. Each block is a module of its own; the names a block uses without defining
 * them (ids, a signal, a second client) are declared for it with their SDK types.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/node.ts';

const DOCS = ['docs/sdk.md', 'docs/quick-start.md'];

/** What blocks use without defining, with a type. Only the names a block does not declare are added. */
const FREE: Record<string, string> = {
  node: "import('hearth-sdk').Client",
  other: "import('hearth-sdk').Client",
  contextId: 'string',
  groupId: 'string',
  namespaceId: 'string',
  applicationId: 'string',
  accountId: 'string',
  clientId: 'string',
  rootKeyId: 'string',
  targetApplicationId: 'string',
  signal: 'AbortSignal',
  fileOrBytes: 'Uint8Array',
  rootProof: 'string',
  challengeHex: 'string',
  context_id: 'string',
  context_identity: 'string',
  state: 'string | null',
  seq: 'number',
  sentAtMs: 'number',
  signature: 'string',
  authorProof: 'string',
  method: 'string',
  argsJson: 'string',
  warrant: 'string',
  initArgs: 'string',
  op: 'string',
  author: 'string',
  signingKey: 'string',
  nonce: 'string',
  showLogin: '() => void',
  reloadState: '(gap: unknown) => void',
};

interface Block {
  file: string;
  line: number;
  code: string;
}

function blocks(): Block[] {
  const out: Block[] = [];
  for (const file of DOCS) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() !== '```ts') continue;
      const start = i + 1;
      let end = start;
      while (end < lines.length && lines[end]!.trim() !== '```') end++;
      out.push({ file, line: start + 1, code: lines.slice(start, end).join('\n') });
      i = end;
    }
  }
  return out;
}

/** The block as a module: what it uses but does not declare, declared; the SDK importable as `hearth-sdk`. */
function moduleOf(block: Block): string {
  const declared = new Set<string>();
  for (const m of block.code.matchAll(/\b(?:const|let|function|class)\s+([A-Za-z_$][\w$]*)/g)) declared.add(m[1]!);
  for (const m of block.code.matchAll(/import\s+(?:(\w+)|\{([^}]*)\})\s+from/g)) {
    if (m[1]) declared.add(m[1]);
    for (const name of (m[2] ?? '').split(',')) declared.add(name.trim().split(/\s+as\s+/).pop()!);
  }
  for (const m of block.code.matchAll(/\{\s*([\w\s,]+)\}\s*=\s*await/g)) for (const n of m[1]!.split(',')) declared.add(n.trim());
  const prelude = Object.entries(FREE)
    .filter(([name]) => !declared.has(name) && new RegExp(`\\b${name.replace('$', '\\$')}\\b`).test(block.code))
    .map(([name, type]) => `declare const ${name}: ${type};`);
  // imports first (a module's imports may follow declarations, but keep the block's line numbers readable)
  return [...prelude, 'export {};', block.code].join('\n');
}

function typeCheck(all: Block[]): Map<Block, string[]> {
  const names = all.map((_, i) => join(ROOT, `__docs_example_${i}.ts`));
  const sources = new Map(names.map((n, i) => [n, moduleOf(all[i]!)]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    types: ['node'],
    baseUrl: ROOT,
    // the SDK package's name (docs/sdk.md "Install") and the node package's entry for the same SDK
    paths: { 'hearth-sdk': ['src/client/index.ts'], 'hearth/client': ['src/client/index.ts'] },
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (f) => sources.get(f) ?? read(f);
  host.fileExists = (f) => sources.has(f) || exists(f);
  const getSource = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, ...rest) => (sources.has(f) ? ts.createSourceFile(f, sources.get(f)!, lang) : getSource(f, lang, ...rest));
  const program = ts.createProgram(names, options, host);
  const result = new Map<Block, string[]>();
  names.forEach((name, i) => {
    const diagnostics = [...program.getSyntacticDiagnostics(program.getSourceFile(name)), ...program.getSemanticDiagnostics(program.getSourceFile(name))];
    result.set(
      all[i]!,
      diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]! + (d.start !== undefined ? ` — at: ${sources.get(name)!.slice(d.start, d.start + 40).split('\n')[0]}` : '')),
    );
  });
  return result;
}

describe('docs examples', () => {
  const all = blocks();
  it('finds the TypeScript examples of the SDK docs', () => {
    expect(all.length).toBeGreaterThan(10);
    expect(all.some((b) => b.code.includes('f.data.events'))).toBe(true);
  });

  it('every TypeScript block of docs/sdk.md and docs/quick-start.md type-checks against the SDK', { timeout: 120_000 }, () => {
    const checked = typeCheck(all);
    const failures = [...checked].filter(([, errors]) => errors.length).map(([b, errors]) => `${b.file}:${b.line}: ${errors.join('; ')}`);
    expect(failures).toEqual([]);
  });

  it('would catch an example that does not type-check', () => {
    const bad: Block = { file: 'x.md', line: 1, code: "import { EventStream } from 'hearth-sdk';\nconst s = new EventStream(node.http);\ns.on('frame', (f) => { if (f.type === 'SyncStatus') console.log(f.data.events); });" };
    expect(typeCheck([bad]).get(bad)!.join('\n')).toMatch(/Property 'events' does not exist/);
  });
});
