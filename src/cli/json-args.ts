/**
 * JSON arguments of operator commands (issue #6): the value itself, `@path` (a file) or `-` (all
 * of stdin), so large or secret-free structured input never has to be quoted on a command line.
 * Integers past 2^53-1 stay exact (they decode as bigint and are written back unchanged). A
 * problem is a usage error (exit 2) naming the flag or argument and where the text came from.
 */
import { readFile } from 'node:fs/promises';
import { parseJson } from '../client/index.ts';
import { UsageError } from './exit.ts';
import { errnoText } from '../errno-text.ts';

export async function readJson(value: string, what: string): Promise<unknown> {
  const { text, source } = await readTextArg(value, what);
  if (text.trim() === '') throw new UsageError(`${what}: empty ${source}; pass a JSON value (e.g. '{}')`);
  try {
    return parseJson(text);
  } catch (err) {
    throw new UsageError(`${what} from ${source} is not valid JSON: ${(err as Error).message}`);
  }
}

/** The text an argument gives: itself, `@path` (a file) or `-` (all of stdin), and where it came from. */
export async function readTextArg(value: string, what: string): Promise<{ text: string; source: string }> {
  let text: string;
  let source: string;
  if (value === '-') {
    text = await readStdin();
    source = 'stdin';
  } else if (value.startsWith('@')) {
    const path = value.slice(1);
    source = `file ${path}`;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new UsageError(`${what}: cannot read ${source}: ${errnoText(err)}`);
    }
  } else {
    text = value;
    source = 'the argument';
  }
  return { text, source };
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('"-" reads JSON from stdin, but stdin is a terminal; pipe the JSON in or pass it inline');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks).toString('utf8');
}
