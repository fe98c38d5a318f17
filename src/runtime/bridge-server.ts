/**
 * The main thread's side of one call's read bridge (protocol.ts; docs/runtime.md "Reads across the
 * thread boundary"): answers the worker's `get`, `range`, blob and `open_sealed` requests from the
 * call's views and the runtime's blob and sealing access, posts each answer and raises the flag the
 * worker waits on. Also the per-thread CPU reading behind the runtime's worker CPU metric.
 */
import { readFileSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import type { RuntimeBlobs } from './blob-access.ts';
import type { CallRequest } from './call-types.ts';
import type { AskedRequest, BridgeRequest, BridgeResponse } from './protocol.ts';
import type { RuntimeSealing } from './sealing.ts';

/** CPU seconds (user + system) of thread `tid` of this process, from /proc; undefined where there is none. */
export function threadCpuSecs(tid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ
  } catch {
    return undefined;
  }
}

/** Answers one call's bridge requests (on its worker's port) from the request's views and the blob access. */
export class BridgeServer {
  private readonly streams = new Map<bigint, { it: AsyncIterator<Uint8Array> | null; rest: Uint8Array }>();
  private closed = false;

  constructor(
    private readonly req: CallRequest,
    private readonly blobs: RuntimeBlobs | undefined,
    private readonly flag: Int32Array,
    private readonly port: MessagePort,
    private readonly seq: number,
    private readonly sealing?: RuntimeSealing,
  ) {}

  close(): void {
    this.closed = true;
    for (const s of this.streams.values()) void s.it?.return?.();
    this.streams.clear();
  }

  async answer(msg: AskedRequest): Promise<void> {
    let res: BridgeResponse;
    try {
      res = { ok: true, value: await this.serve(msg), seq: this.seq, id: msg.id };
    } catch (e) {
      res = { ok: false, error: e instanceof Error ? e.message : String(e), seq: this.seq, id: msg.id };
    }
    if (this.closed) return;
    this.port.postMessage(res);
    Atomics.store(this.flag, 0, 1);
    Atomics.notify(this.flag, 0);
  }

  private async serve(msg: BridgeRequest): Promise<unknown> {
    const req = this.req;
    switch (msg.op) {
      case 'get': {
        const view = msg.space === 'state' ? req.state : msg.space === 'private' ? req.privateState : msg.space === 'index' ? req.index : req.indexMeta;
        return view ? await view.get(msg.key) : undefined;
      }
      case 'range':
        return req.index.range(msg.lo, msg.hi, msg.limit);
      case 'blobHas':
        return this.needBlobs().has(msg.blobId);
      case 'blobFetch':
        return (await this.needBlobs().open(msg.blobId, msg.contextId)) !== null;
      case 'blobPut':
        return this.needBlobs().put(msg.bytes);
      case 'blobRead':
        return this.readBlob(msg.fd, msg.blobId, msg.max);
      case 'openSealed':
        // the executor comes from the request held here, not from the worker's message
        if (!this.sealing) throw new Error('sealing access is not configured');
        return this.sealing.open(req.executorId, msg.envelope);
    }
  }

  private needBlobs(): RuntimeBlobs {
    if (!this.blobs) throw new Error('blob access is not configured');
    return this.blobs;
  }

  private async readBlob(fd: bigint, blobId: Uint8Array, max: number): Promise<Uint8Array> {
    let s = this.streams.get(fd);
    if (!s) {
      const body = await this.needBlobs().open(blobId);
      s = { it: body ? body[Symbol.asyncIterator]() : null, rest: new Uint8Array() };
      this.streams.set(fd, s);
    }
    const parts: Uint8Array[] = [];
    let have = 0;
    while (have < max) {
      if (s.rest.length === 0) {
        const next = s.it ? await s.it.next() : { done: true as const, value: undefined };
        if (next.done) break;
        s.rest = next.value;
        continue;
      }
      const take = s.rest.subarray(0, max - have);
      parts.push(take);
      have += take.length;
      s.rest = s.rest.subarray(take.length);
    }
    return Buffer.concat(parts);
  }
}
