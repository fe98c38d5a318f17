/**
 * Answering a request whose body is refused before it was read (413 from `Content-Length`, 507 for
 * a blob that cannot fit; issue #37 item 1) so that the client sees the answer. Closing the
 * connection at once, as Node does after an answer with `Connection: close`, made the kernel reset
 * a client still sending its body, and a reset throws away the answer waiting in the client's
 * buffer: a 400 MiB upload refused with 507 was seen as `EPIPE`. Here the node half-closes after
 * the answer and reads (and drops) what still arrives for at most {@link LINGER_MS}, then closes —
 * the lingering close of other HTTP servers. The body's bytes are never kept.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a refused body may keep arriving after the answer before the connection is closed. */
export const LINGER_MS = 2_000;

/** Marks the answer as the connection's last, and lingers after it (see the module doc). */
export function closeAfterAnswer(res: ServerResponse, lingerMs = LINGER_MS): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
  const socket = res.socket as (Socket & { destroySoon?: () => void }) | null;
  if (!socket || socket.destroyed) return;
  // Node ends a `Connection: close` answer's socket with destroySoon() once the answer is written
  socket.destroySoon = () => {
    socket.end();
    socket.resume(); // drop what still arrives
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('end', () => socket.destroy()); // the client stopped sending
    socket.once('close', () => clearTimeout(timer));
  };
}
