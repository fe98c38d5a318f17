/**
 * Raw HTTP over a socket, for requests `fetch` will not send (a false Content-Length, bytes that
 * are not UTF-8, a connection that never sends a request). Loopback only.
 */
import net from 'node:net';

export interface RawAnswer {
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** the node closed the connection */
  closed: boolean;
}

/** Parses the first HTTP response in `text` (headers only need to be complete). */
function parse(text: string): Omit<RawAnswer, 'closed'> {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return { status: null, headers: {}, body: '' };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) };
}

/**
 * Sends `head` (and `body`, which may be shorter than the Content-Length it announces) and resolves
 * once a complete response head has arrived and the node has closed the socket or `settleMs` passed
 * since the answer, or with `status: null` after `timeoutMs` without an answer.
 */
export function rawRequest(url: string, head: string, body: Buffer | string = '', opts: { timeoutMs?: number; settleMs?: number } = {}): Promise<RawAnswer> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    let settled = false;
    let settle: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(settle);
      socket.destroy();
      resolve({ ...parse(text), closed });
    };
    const timer = setTimeout(() => finish(false), opts.timeoutMs ?? 5_000);
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (text.includes('\r\n\r\n') && !settle) settle = setTimeout(() => finish(false), opts.settleMs ?? 300);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(head.endsWith('\r\n\r\n') ? head : `${head}\r\n\r\n`);
    if (body.length > 0) socket.write(body);
  });
}

/** Opens a TCP connection that sends nothing; resolves once connected. */
export function idleSocket(url: string): Promise<net.Socket & { closedByPeer: Promise<void> }> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname) as net.Socket & { closedByPeer: Promise<void> };
    socket.closedByPeer = new Promise((r) => socket.once('close', () => r()));
    socket.on('error', () => undefined);
    socket.resume(); // read (and drop) whatever comes, so the peer's close is seen
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}
