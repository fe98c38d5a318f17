/**
 * Questions the CLI asks (issue #6; product.md §10): destructive verbs confirm unless `--yes`, and
 * secrets come from a file, an environment variable, stdin or a hidden prompt — never from argv,
 * where other users of the machine can read them in the process list.
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { UsageError } from './exit.ts';
import { errnoText } from '../errno-text.ts';

export interface Terminal {
  stdin: NodeJS.ReadStream;
  stderr: NodeJS.WriteStream;
}

const processTerminal = (): Terminal => ({ stdin: process.stdin, stderr: process.stderr });

/**
 * Resolves when the user agreed. With `yes` it does not ask; without a terminal it refuses with a
 * usage error naming `--yes`, so scripts never hang on a question nobody sees.
 */
export async function confirm(question: string, yes: boolean | undefined, term: Terminal = processTerminal()): Promise<void> {
  if (yes) return;
  if (!term.stdin.isTTY) throw new UsageError(`${question} — refusing without a terminal to ask on; pass --yes to confirm`);
  const answer = await ask(`${question} [y/N] `, term, false);
  if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('cancelled');
}

export interface SecretSources {
  /** `--password-file <path>` */
  file?: string;
  /** `--password-stdin`: the first line of stdin */
  stdin?: boolean;
  /** environment variables tried in order */
  env?: string[];
  /** what to call it in the prompt and in errors */
  label: string;
}

/** File, then stdin, then the environment, then a hidden prompt on a terminal. */
export async function readSecretFrom(sources: SecretSources, term: Terminal = processTerminal()): Promise<string> {
  if (sources.file) {
    try {
      return (await readFile(sources.file, 'utf8')).replace(/\r?\n$/, '');
    } catch (err) {
      throw new UsageError(`cannot read ${sources.label} file ${sources.file}: ${errnoText(err)}`);
    }
  }
  if (sources.stdin) return firstLine(term.stdin);
  for (const name of sources.env ?? []) {
    const value = process.env[name];
    if (value) return value;
  }
  if (!term.stdin.isTTY) {
    const env = sources.env?.length ? `, set ${sources.env.join(' or ')}` : '';
    throw new UsageError(`no ${sources.label} given: pass --password-file or --password-stdin${env}`);
  }
  return ask(`${sources.label}: `, term, true);
}

async function firstLine(stdin: NodeJS.ReadableStream): Promise<string> {
  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  throw new UsageError('--password-stdin: stdin was empty');
}

/** One line from the terminal; `hidden` echoes nothing (the characters typed are not shown). */
function ask(prompt: string, term: Terminal, hidden: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: term.stdin, output: term.stderr, terminal: true });
    if (hidden) {
      // readline echoes through _writeToOutput; swallowing it hides what is typed.
      (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => undefined;
      term.stderr.write(prompt);
    }
    rl.on('SIGINT', () => {
      rl.close();
      reject(new UsageError('cancelled'));
    });
    rl.question(hidden ? '' : prompt, (answer) => {
      if (hidden) term.stderr.write('\n');
      rl.close();
      resolve(answer);
    });
  });
}
