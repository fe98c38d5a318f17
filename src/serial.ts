/**
 * Runs async critical sections one after another, for every domain whose state changes read,
 * decide and write (auth: a refresh token's single use, the last-admin rule; the governance log,
 * blobs, accounts, applications, aliases, intents): serialising them makes each one atomic within
 * the process, and the write itself is one store batch.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
