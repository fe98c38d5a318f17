/**
 * Concurrent reads of one context (issue #14; docs/performance.md "Reads of one context").
 *
 * The reference SDK marks no method read-only in the ABI, so a call of such a method used to take
 * the context's exclusive lock even when it only read. A call that changed nothing — no commit, no
 * write of any keyspace, no event — is a read, whatever the ABI says. So a call of a method whose
 * last call changed nothing runs first under the *shared* lock, with the guest allowed to
 * write and commit as usual (its writes stay in the runtime's overlay; nothing is persisted under
 * the shared lock):
 *
 * - when it changed nothing, it is done: it persists nothing (no store write at all);
 * - when it did change something, it moves to the exclusive lock. If no writer held the lock in
 *   between (the lock's write stamp is unchanged), the state is the one it ran against, so its
 *   outcome is committed as is; otherwise it runs again under the exclusive lock.
 *
 * Why results are those of a serial execution: under the shared lock no writer runs, so the
 * context's state is constant while a read runs; the read's outcome is that of running it alone at
 * any instant of that interval. A write commits only an outcome computed against the state it is
 * committed onto (same stamp = no writer in between, and every writer of a context's state holds
 * its exclusive lock). Each call therefore takes effect at one instant between its start and its
 * end, and those instants order the calls: a serial execution in that order gives every call the
 * same result (test: read-path.test.ts with concurrent readers and writers).
 *
 * A method runs under the exclusive lock until one of its calls is seen changing nothing (its
 * first call, and every call after one that changed something), so writes do not pay for a shared
 * attempt and concurrent writes are not computed twice. The hint is per context and method, bounded.
 */
import type { CallResult, CallSuccess } from '../runtime/index.ts';

/** (context, method) hints kept at most; past it the map starts over (hints are only hints). */
const HINTS_KEPT = 10_000;

/** Whether a successful call changed anything the executor would persist or publish. */
export function changesState(result: CallSuccess): boolean {
  return (
    result.commit !== null ||
    result.writes.length > 0 ||
    result.privateWrites.length > 0 ||
    result.indexWrites.length > 0 ||
    (result.indexMetaWrites?.length ?? 0) > 0 ||
    result.events.length > 0
  );
}

/** A call's result that changed something: what the exclusive phase commits. */
export function changedSomething(result: CallResult): result is CallSuccess {
  return result.ok && changesState(result);
}

export class ReadHints {
  /** `<context> <method>` → its last call changed state */
  private readonly wrote = new Map<string, boolean>();

  /** Whether a call of `method` should be tried under the shared lock first: its last call changed nothing. */
  tryShared(contextId: string, method: string): boolean {
    return this.wrote.get(`${contextId} ${method}`) === false;
  }

  /** What a call of `method` did (failed calls say nothing about the method). */
  observed(contextId: string, method: string, result: CallResult): void {
    if (!result.ok) return;
    if (this.wrote.size >= HINTS_KEPT) this.wrote.clear();
    this.wrote.set(`${contextId} ${method}`, changesState(result));
  }
}
