import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { buildProgram } from './program.ts';
import { renderReference } from './reference.ts';

it('docs/cli-reference.md is the reference generated from the command tree (run: npm run docs:cli)', () => {
  const committed = readFileSync(new URL('../../docs/cli-reference.md', import.meta.url), 'utf8');
  expect(committed).toBe(renderReference(buildProgram()));
});

it('documents every command with its options', () => {
  const text = renderReference(buildProgram());
  expect(text).toContain('## hearth login');
  expect(text).toContain('| `--password-stdin` |');
  expect(text).toContain('### hearth config set');
  expect(text).not.toContain('hearth help');
});
