/** The HTTP status an SDK call ended with: `success` when it resolved, the error's status when it threw one. */
import { HttpError } from '../../src/client/index.ts';

export async function statusOf(p: Promise<unknown>, success = 200): Promise<number> {
  try {
    await p;
    return success;
  } catch (err) {
    if (err instanceof HttpError) return err.status;
    throw err;
  }
}
