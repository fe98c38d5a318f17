/**
 * Who may hold the HTTP server's connections, and for how long a request body may take (issue #23
 * section 1; docs/security.md "Limits"). The total cap (`server.maxConnections`, limits.ts) alone let
 * one client address take every slot: 8,192 connections to `POST /auth/token` each trickling a
 * declared 100,000-byte body made every new connection, health included, fail for as long as they
 * were held (only the 600 s request timeout applied once headers were in). Here:
 *
 * - one address holds at most `perAddress` connections, always below the cap minus the reserve, so
 *   the address that holds its quota leaves room for everyone else; further ones are closed on
 *   accept;
 * - the last `reserved` slots go only to addresses holding fewer than {@link LIGHT_HOLDER}
 *   connections (a browser, an SDK, a probe), so many addresses each holding a few dozen cannot take
 *   them either; and, among those, to a newcomer (holding none) or to an address that finished a
 *   request within {@link FINISHED_WINDOW_MS} (issue #37 item 4): thousands of addresses each
 *   trickling a few bodies that never end cannot take them one more connection at a time;
 * - while the server is within the reserve of its cap, a connection that has not sent one byte for
 *   {@link IDLE_UNDER_PRESSURE_MS} is closed (idle sockets cannot fill the cap for the whole header
 *   timeout);
 * - a request body must be complete `bodyTimeoutMs` after its headers, or — once the request passed
 *   the guard (a valid token) — within that plus its size at `bodyMinBytesPerSec`; else the
 *   connection is closed.
 *
 * Every connection closed by these rules is counted by reason (`hearth_http_connections_closed_total`)
 * and reported in one log line per {@link REPORT_MS}, never one line per socket.
 *
 * A refused connection is not simply reset (issue #37 item 8: a client over its quota saw only
 * resets): a few of them at a time ({@link REFUSING_PER_ADDRESS} per address, at most
 * {@link MAX_REFUSING}) are kept for {@link REFUSAL_GRACE_MS}; one whose request line and headers
 * arrive in that time is answered 503 with `Retry-After` (http/app.ts) and closed, and counted in
 * `hearth_http_refusals_answered_total`. The others are closed at once, as before.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { GaugeSource } from './metrics.ts';

export interface ConnectionPolicy {
  /** the server's total cap; 0 = uncapped (then there is no reserve) */
  maxConnections: number;
  /** connections one address may hold; 0 = no per-address limit */
  perAddress: number;
  /** connections one address group (IPv4 /24, IPv6 /64) may hold; 0 = no group limit */
  perGroup?: number;
  /** slots at the top of the cap kept for addresses holding fewer than LIGHT_HOLDER */
  reserved: number;
  /** a body must be complete this long after its request's headers */
  bodyTimeoutMs: number;
  /** beyond `bodyTimeoutMs`, for a request that passed the guard: its size at this rate */
  bodyMinBytesPerSec: number;
}

/** An address holding fewer connections than this may use the reserved slots... */
export const LIGHT_HOLDER = 8;
/** ...when its group (IPv4 /24, IPv6 /64) holds fewer than this. */
export const LIGHT_GROUP = 32;
/** An address that finished a request (headers without a body, or a whole body) this recently keeps its claim on the reserve. */
export const FINISHED_WINDOW_MS = 60_000;
/** Addresses remembered as having finished a request (the oldest forgotten first): bounds the memory a flood of addresses can take. */
export const MAX_FINISHERS = 4_096;
/** Near the cap, a body arriving for at least this long may be evicted for a new connection, slowest first. */
export const EVICT_MIN_AGE_MS = 1_000;
/** The slowest bodies are ranked at most this often under a flood of new connections. */
const RANK_MS = 200;
/** Near the cap, a connection silent this long since its accept is closed. */
export const IDLE_UNDER_PRESSURE_MS = 1_000;
/** At most one log line per this long about connections closed by the limits. */
export const REPORT_MS = 5_000;
/** Longest time between sweeps: deadlines are kept to within this much. */
const MAX_SWEEP_MS = 1_000;
/** A refused connection kept to be answered 503 must send its request's headers within this long. */
export const REFUSAL_GRACE_MS = 1_000;
/** Refused connections kept to be answered, per address and in all (each holds a descriptor meanwhile). */
export const REFUSING_PER_ADDRESS = 4;
export const MAX_REFUSING = 64;
/** `Retry-After` of a 503 answered to a refused connection. */
export const REFUSAL_RETRY_AFTER_SECS = 2;

export const CLOSE_REASONS = ['per_address', 'per_group', 'reserved', 'idle_under_pressure', 'body_deadline', 'header_deadline', 'slow_body_evicted'] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];

/**
 * The policy for a cap: configured values win (0 = derived). Derived: the reserve is an eighth of
 * the cap, the per-address quota a quarter of it (at least 16); the quota never exceeds the cap
 * minus the reserve, so one address can never reach the reserved slots.
 */
export function resolveConnectionPolicy(
  cap: number,
  c: { maxConnectionsPerAddress: number; maxConnectionsPerGroup?: number; reservedConnections: number; bodyTimeoutSecs: number; bodyMinBytesPerSec: number },
): ConnectionPolicy {
  const reserved = cap <= 0 ? 0 : c.reservedConnections > 0 ? Math.min(c.reservedConnections, cap - 1) : Math.floor(cap / 8);
  let perAddress = c.maxConnectionsPerAddress > 0 ? c.maxConnectionsPerAddress : Math.max(16, Math.floor(cap / 4));
  if (cap > 0) perAddress = Math.max(1, Math.min(perAddress, cap - reserved));
  // a group holds at most half the cap (never less than one address may), so two /24s cannot take it all
  let perGroup = (c.maxConnectionsPerGroup ?? 0) > 0 ? c.maxConnectionsPerGroup! : Math.max(perAddress, Math.floor(cap / 2));
  if (cap > 0) perGroup = Math.max(perAddress, Math.min(perGroup, cap - reserved));
  return {
    maxConnections: Math.max(0, cap),
    perAddress,
    perGroup,
    reserved,
    bodyTimeoutMs: Math.max(1, c.bodyTimeoutSecs) * 1000,
    bodyMinBytesPerSec: Math.max(1, c.bodyMinBytesPerSec),
  };
}

/** `::ffff:1.2.3.4` and `1.2.3.4` are one client. */
function addressOf(socket: Socket): string {
  const a = socket.remoteAddress ?? '';
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

/**
 * The group an address belongs to: its IPv4 /24 or IPv6 /64 (one host of a provider usually has a
 * whole /64, and many addresses of one /24 are one network).
 */
export function groupOf(address: string): string {
  if (address.includes('.') && !address.includes(':')) return `${address.slice(0, address.lastIndexOf('.'))}.0/24`;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const full = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${full.slice(0, 4).map((h) => (h || '0').toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** Whether a request announces a body (a positive Content-Length, or a chunked one). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

interface Held {
  address: string;
  group: string;
  /** ms on the monotonic clock */
  acceptedAt: number;
}

export class ConnectionGovernor {
  private readonly held = new Map<Socket, Held>();
  private readonly perAddress = new Map<string, number>();
  /** sockets whose request body is still arriving → (request, deadline ms) */
  private readonly bodies = new Map<Socket, { req: IncomingMessage; deadline: number; startBytes: number; startedAt: number }>();
  private readonly perGroup = new Map<string, number>();
  /** address → when it last finished a request (ms), oldest first */
  private readonly finishers = new Map<string, number>();
  /** bodies ranked slowest first for eviction, and when they were ranked */
  private ranked: { at: number; sockets: Socket[] } | undefined;
  private readonly closed = new Map<CloseReason, number>(CLOSE_REASONS.map((r) => [r, 0]));
  /** refused connections kept to be answered 503 → why, by when, from where */
  private readonly refusing = new Map<Socket, { reason: CloseReason; deadline: number; address: string }>();
  private readonly refusingPerAddress = new Map<string, number>();
  private readonly answeredRefusals = new Map<CloseReason, number>(CLOSE_REASONS.map((r) => [r, 0]));
  /** counts since the last log line */
  private readonly unreported = new Map<CloseReason, number>();
  private timer: NodeJS.Timeout | undefined;
  private reportTimer: NodeJS.Timeout | undefined;
  private readonly sweepMs: number;

  constructor(
    readonly policy: ConnectionPolicy,
    private readonly logger?: Pick<Logger, 'warn'>,
    /** a monotonic clock in ms */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.sweepMs = Math.max(1, Math.min(MAX_SWEEP_MS, Math.ceil(policy.bodyTimeoutMs / 8), IDLE_UNDER_PRESSURE_MS / 2));
  }

  /** Wires the governor to a server: every accepted connection and every request with a body. */
  attach(server: Server): () => void {
    const onConnection = (socket: Socket) => this.admit(socket);
    const onRequest = (req: IncomingMessage) => {
      if (this.refusing.has(req.socket)) return;
      if (hasBody(req)) this.expectBody(req, this.policy.bodyTimeoutMs);
      else this.finished(addressOf(req.socket));
    };
    server.on('connection', onConnection);
    // before the app's own listener: a guard that decides synchronously extends the deadline from
    // inside that listener, so the deadline must exist by then
    server.prependListener('request', onRequest);
    server.once('close', () => this.stop());
    return () => {
      server.off('connection', onConnection);
      server.off('request', onRequest);
      this.stop();
    };
  }

  /** A new connection: held, or closed at once (counted) when its address or the reserve says no. */
  admit(socket: Socket): boolean {
    const address = addressOf(socket);
    const group = groupOf(address);
    const holding = this.perAddress.get(address) ?? 0;
    const groupHolding = this.perGroup.get(group) ?? 0;
    const { perAddress, maxConnections, reserved } = this.policy;
    const perGroup = this.policy.perGroup ?? 0;
    let refuse: CloseReason | undefined;
    if (perAddress > 0 && holding >= perAddress) refuse = 'per_address';
    else if (perGroup > 0 && groupHolding >= perGroup) refuse = 'per_group';
    else if (maxConnections > 0 && this.held.size >= maxConnections - Math.max(reserved, 1)) {
      // near the cap: the slowest body that has had its chance makes room, so slow bodies from
      // any number of addresses cannot hold the cap (issue #37 item 4); without one, only light
      // holders (few connections in their address and their group) get the reserved slots, if
      // they are new here or have finished a request lately
      if (!this.evictSlowest() && reserved > 0 && (holding >= LIGHT_HOLDER || groupHolding >= LIGHT_GROUP || (holding > 0 && !this.finishedLately(address)))) refuse = 'reserved';
    }
    if (refuse) {
      this.count(refuse);
      if (!this.keepToAnswer(socket, address, refuse)) socket.destroy();
      return false;
    }
    this.held.set(socket, { address, group, acceptedAt: this.now() });
    this.perAddress.set(address, holding + 1);
    this.perGroup.set(group, groupHolding + 1);
    socket.once('close', () => this.release(socket));
    this.ensureSweeping();
    return true;
  }

  /** Keeps a refused connection for {@link REFUSAL_GRACE_MS} so its request can be answered 503, within the bounds. */
  private keepToAnswer(socket: Socket, address: string, reason: CloseReason): boolean {
    const mine = this.refusingPerAddress.get(address) ?? 0;
    if (mine >= REFUSING_PER_ADDRESS || this.refusing.size >= MAX_REFUSING) return false;
    this.refusing.set(socket, { reason, deadline: this.now() + REFUSAL_GRACE_MS, address });
    this.refusingPerAddress.set(address, mine + 1);
    socket.once('close', () => {
      const r = this.refusing.get(socket);
      if (!r) return;
      this.refusing.delete(socket);
      const left = (this.refusingPerAddress.get(r.address) ?? 1) - 1;
      if (left <= 0) this.refusingPerAddress.delete(r.address);
      else this.refusingPerAddress.set(r.address, left);
    });
    this.ensureSweeping();
    return true;
  }

  /**
   * Why this connection was refused, when it was kept only to be told so (its request is answered
   * 503 and the connection closed); undefined for a connection that is held.
   */
  refusal(socket: Socket): CloseReason | undefined {
    return this.refusing.get(socket)?.reason;
  }

  /** The refusal of this connection was answered: counted; it is closed after the answer (or at the next deadline). */
  answered(socket: Socket): void {
    const r = this.refusing.get(socket);
    if (!r) return;
    this.answeredRefusals.set(r.reason, (this.answeredRefusals.get(r.reason) ?? 0) + 1);
    r.deadline = this.now() + REFUSAL_GRACE_MS * 2;
  }

  /** Refusals answered with 503, by reason. */
  answeredBy(reason: CloseReason): number {
    return this.answeredRefusals.get(reason) ?? 0;
  }

  private release(socket: Socket): void {
    const h = this.held.get(socket);
    this.bodies.delete(socket);
    if (!h) return;
    this.held.delete(socket);
    const left = (this.perAddress.get(h.address) ?? 1) - 1;
    if (left <= 0) this.perAddress.delete(h.address);
    else this.perAddress.set(h.address, left);
    const groupLeft = (this.perGroup.get(h.group) ?? 1) - 1;
    if (groupLeft <= 0) this.perGroup.delete(h.group);
    else this.perGroup.set(h.group, groupLeft);
  }

  /**
   * Closes the connection whose body arrives slowest (bytes since its headers per ms), among those
   * waited for at least {@link EVICT_MIN_AGE_MS}; answers whether one was closed. The ranking is
   * reused for {@link RANK_MS}, so a flood of new connections costs one sort per period.
   */
  private evictSlowest(): boolean {
    const now = this.now();
    if (!this.ranked || now - this.ranked.at >= RANK_MS) {
      const rated: Array<[Socket, number]> = [];
      for (const [socket, b] of this.bodies) {
        if (now - b.startedAt < EVICT_MIN_AGE_MS || socket.destroyed) continue;
        rated.push([socket, (socket.bytesRead - b.startBytes) / (now - b.startedAt)]);
      }
      rated.sort((a, b) => a[1] - b[1]);
      this.ranked = { at: now, sockets: rated.map(([s]) => s) };
    }
    for (let s = this.ranked.sockets.shift(); s; s = this.ranked.sockets.shift()) {
      if (s.destroyed || !this.bodies.has(s)) continue;
      this.bodies.delete(s);
      this.count('slow_body_evicted');
      s.destroy();
      return true;
    }
    return false;
  }

  /** The request's body must be complete within `ms` from now (replaces an earlier deadline of its connection). */
  expectBody(req: IncomingMessage, ms: number): void {
    if (req.complete || req.socket.destroyed) return;
    const earlier = this.bodies.get(req.socket);
    const same = earlier?.req === req;
    this.bodies.set(req.socket, {
      req,
      deadline: this.now() + ms,
      startBytes: same ? earlier.startBytes : req.socket.bytesRead,
      startedAt: same ? earlier.startedAt : this.now(),
    });
    this.ensureSweeping();
  }

  /** Whether the body of this request is still being waited for. */
  awaitsBody(req: IncomingMessage): boolean {
    return this.bodies.get(req.socket)?.req === req;
  }

  /**
   * A request that passed the guard: its body gets the base allowance plus `bytes` at the minimum
   * rate (never less than it already had).
   */
  extendBody(req: IncomingMessage, bytes: number): void {
    const { bodyTimeoutMs, bodyMinBytesPerSec } = this.policy;
    this.expectBody(req, bodyTimeoutMs + Math.ceil((Math.max(0, bytes) / bodyMinBytesPerSec) * 1000));
  }

  /** A connection closed by the header deadline (limits.ts), counted with the others. */
  countHeaderDeadline(): void {
    this.count('header_deadline');
  }

  private count(reason: CloseReason): void {
    this.closed.set(reason, (this.closed.get(reason) ?? 0) + 1);
    this.unreported.set(reason, (this.unreported.get(reason) ?? 0) + 1);
    if (this.reportTimer === undefined && this.logger) {
      this.reportTimer = setTimeout(() => this.report(), REPORT_MS);
      this.reportTimer.unref();
    }
  }

  /** One line for every connection closed by the limits since the last line. */
  report(): void {
    clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    if (this.unreported.size === 0) return;
    const closed = Object.fromEntries(this.unreported);
    this.unreported.clear();
    this.logger?.warn({ closed, open: this.held.size, policy: { perAddress: this.policy.perAddress, reserved: this.policy.reserved } }, 'connections closed by the connection limits');
  }

  private ensureSweeping(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  /** Closes bodies past their deadline and, near the cap, connections that never sent a byte. */
  sweep(): void {
    const now = this.now();
    for (const [socket, b] of this.bodies) {
      if (b.req.complete || socket.destroyed) {
        this.bodies.delete(socket);
        if (b.req.complete) this.finished(addressOf(socket));
      } else if (b.deadline <= now) {
        this.bodies.delete(socket);
        this.count('body_deadline');
        socket.destroy();
      }
    }
    for (const [socket, r] of this.refusing) {
      if (r.deadline <= now) socket.destroy(); // its 'close' removes it
    }
    // Node itself closes connections beyond the cap before they reach admit(): keep a few slots free
    // for newcomers by evicting the slowest bodies, so a cap filled by light holders still turns
    const { maxConnections, reserved } = this.policy;
    if (maxConnections > 0) {
      const headroom = Math.max(1, Math.floor(reserved / 8));
      while (this.held.size > maxConnections - headroom && this.evictSlowest()) {
        /* one more slot */
      }
    }
    if (this.underPressure()) {
      for (const [socket, h] of this.held) {
        if (socket.bytesRead === 0 && now - h.acceptedAt >= IDLE_UNDER_PRESSURE_MS) {
          this.count('idle_under_pressure');
          socket.destroy();
        }
      }
    }
    if (this.bodies.size === 0 && this.held.size === 0 && this.refusing.size === 0) this.stopSweeping();
  }

  /** `address` finished a request now: remembered (most recent last), the oldest forgotten past {@link MAX_FINISHERS}. */
  finished(address: string): void {
    this.finishers.delete(address);
    this.finishers.set(address, this.now());
    if (this.finishers.size > MAX_FINISHERS) this.finishers.delete(this.finishers.keys().next().value!);
  }

  private finishedLately(address: string): boolean {
    const at = this.finishers.get(address);
    return at !== undefined && this.now() - at <= FINISHED_WINDOW_MS;
  }

  private underPressure(): boolean {
    const { maxConnections, reserved } = this.policy;
    return maxConnections > 0 && this.held.size >= maxConnections - Math.max(reserved, 1);
  }

  private stopSweeping(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  stop(): void {
    this.stopSweeping();
    this.report();
  }

  /** open connections held now */
  get open(): number {
    return this.held.size;
  }

  /** bodies being waited for now (tests) */
  get waitingBodies(): number {
    return this.bodies.size;
  }

  closedBy(reason: CloseReason): number {
    return this.closed.get(reason) ?? 0;
  }

  /** `/metrics` series: connections closed by reason (a running total) and connections open. */
  metrics(): GaugeSource[] {
    return [
      {
        name: 'hearth_http_connections_closed_total',
        help: 'HTTP connections closed by the connection limits, by reason (docs/security.md "Limits")',
        type: 'counter',
        read: () => CLOSE_REASONS.map((reason) => ({ labels: { reason }, value: this.closedBy(reason) })),
      },
      { name: 'hearth_http_connections_open', help: 'HTTP connections open now', read: () => [{ value: this.open }] },
      {
        name: 'hearth_http_refusals_answered_total',
        help: 'Refused HTTP connections whose request was answered 503 with Retry-After before closing, by reason',
        type: 'counter',
        read: () => (['per_address', 'per_group', 'reserved'] as const).map((reason) => ({ labels: { reason }, value: this.answeredBy(reason) })),
      },
    ];
  }
}
