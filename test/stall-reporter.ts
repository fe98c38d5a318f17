/**
 * A vitest reporter that turns a frozen test run into a failure that says where it froze.
 *
 * Why: vitest's own deadlines (testTimeout, hookTimeout) are timers inside the test process, so a
 * process whose JavaScript thread is blocked (a native deadlock: seen once in node:crypto, see
 * src/crypto/keys.ts) never reaches them, and the run waits until CI's own limit ends it with no
 * word of which file. This reporter runs in vitest's main process, which stays free: when no test
 * has started or ended for STALL_MS while files are running, it prints the files still running
 * (and their tests, when vitest heard of their start before the freeze), ends the processes under
 * vitest (so no leftover holds the output open) and exits 1. It does the same when vitest has not
 * exited EXIT_MS after the run ended (not in watch mode). HEARTH_TEST_STALL_MS and
 * HEARTH_TEST_EXIT_MS override the two limits (the longest test deadline here is 10 min).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';

const STALL_MS = Number(process.env.HEARTH_TEST_STALL_MS ?? 15 * 60_000);
const EXIT_MS = Number(process.env.HEARTH_TEST_EXIT_MS ?? 120_000);

/** Pids of every process under `root` (Linux /proc; none elsewhere). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  for (const e of entries) {
    try {
      // the field after the parenthesised command name is the state, then the parent pid
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      // the process ended while we read
    }
  }
  const out: number[] = [];
  const walk = (pid: number): void => {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

function endEverythingUnder(): void {
  for (const pid of descendants(process.pid).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export default class StallReporter implements Reporter {
  private readonly running = new Map<string, TestModule>();
  private readonly cases = new Set<TestCase>();
  private timer: NodeJS.Timeout | undefined;
  /** `vitest` in watch mode stays up after each run by design */
  private watching = false;

  onInit(ctx: Vitest): void {
    this.watching = ctx.config.watch;
  }

  private touch(): void {
    clearTimeout(this.timer);
    if (this.running.size === 0) return;
    this.timer = setTimeout(() => this.stalled(), STALL_MS);
    this.timer.unref();
  }

  private stalled(): void {
    const minutes = (STALL_MS / 60_000).toFixed(1);
    const lines = [`tests: no test started or ended for ${minutes} min; the run is frozen. Still running:`];
    for (const m of this.running.values()) lines.push(`  ${m.relativeModuleId}`);
    for (const c of this.cases) lines.push(`    test: ${c.fullName} (${c.module.relativeModuleId})`);
    process.stderr.write(`${lines.join('\n')}\n`);
    endEverythingUnder();
    process.exit(1);
  }

  onTestModuleStart(m: TestModule): void {
    this.running.set(m.moduleId, m);
    this.touch();
  }

  onTestModuleEnd(m: TestModule): void {
    this.running.delete(m.moduleId);
    for (const c of this.cases) if (c.module.moduleId === m.moduleId) this.cases.delete(c);
    this.touch();
  }

  onTestCaseReady(c: TestCase): void {
    this.cases.add(c);
    this.touch();
  }

  onTestCaseResult(c: TestCase): void {
    this.cases.delete(c);
    this.touch();
  }

  onTestRunEnd(): void {
    clearTimeout(this.timer);
    if (this.watching) return;
    const t = setTimeout(() => {
      process.stderr.write(`tests: the run ended ${EXIT_MS / 1000} s ago and vitest has not exited; ending the processes under it\n`);
      endEverythingUnder();
      process.exit(1);
    }, EXIT_MS);
    t.unref();
  }
}
