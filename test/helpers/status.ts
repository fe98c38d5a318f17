/** Test helpers for how an SDK call ended. */
import { expect } from 'vitest';
import { HttpError } from '../../src/client/index.ts';

/** The HTTP status an SDK call ended with: `success` when it resolved, the error's status when it threw one. */
export async function statusOf(p: Promise<unknown>, success = 200): Promise<number> {
  try {
    await p;
    return success;
  } catch (err) {
    if (err instanceof HttpError) return err.status;
    throw err;
  }
}

/** How an SDK call ended: `{ status: 200, text: '' }` when it resolved, else the HttpError's status and body text. */
export async function outcomeOf(p: Promise<unknown>): Promise<{ status: number; text: string }> {
  try {
    await p;
    return { status: 200, text: '' };
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, text: err.bodyText };
    throw err;
  }
}

/** The HttpError an SDK call must end with (the test fails when it resolves or throws something else). */
export async function httpError(p: Promise<unknown>): Promise<HttpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HttpError);
  return err as HttpError;
}
