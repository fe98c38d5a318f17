/**
 * A small hand-written borsh codec (admin-wire-b §1.7): little-endian fixed ints, u32le length
 * prefixes for vectors and strings, u8 enum tags, `Option` = 0x00 | 0x01 ‖ value. Enough for the
 * byte layouts this node signs and verifies (owner-op proofs §5.2, invitations §2.7); no schema
 * machinery, so each layout stays readable next to the reference's table.
 */
import { badRequest } from '../errors.ts';

export class BorshWriter {
  private readonly parts: Buffer[] = [];

  u8(n: number): this {
    this.parts.push(Buffer.from([n & 0xff]));
    return this;
  }

  bool(b: boolean): this {
    return this.u8(b ? 1 : 0);
  }

  u32(n: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n >>> 0);
    this.parts.push(b);
    return this;
  }

  u64(n: bigint | number | string): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.parts.push(b);
    return this;
  }

  /** fixed-size bytes, no length prefix; `size` is checked so a wrong-length id cannot slip in */
  fixed(bytes: Uint8Array, size?: number): this {
    if (size !== undefined && bytes.length !== size) throw new Error(`borsh: expected ${size} bytes, got ${bytes.length}`);
    this.parts.push(Buffer.from(bytes));
    return this;
  }

  /** 32 bytes from 64 hex */
  hex32(hex: string): this {
    return this.fixed(Buffer.from(hex, 'hex'), 32);
  }

  bytes(bytes: Uint8Array): this {
    return this.u32(bytes.length).fixed(bytes);
  }

  string(s: string): this {
    return this.bytes(Buffer.from(s, 'utf8'));
  }

  vec<T>(items: readonly T[], each: (w: this, item: T) => void): this {
    this.u32(items.length);
    for (const item of items) each(this, item);
    return this;
  }

  option<T>(value: T | undefined | null, each: (w: this, item: T) => void): this {
    if (value === undefined || value === null) return this.u8(0);
    this.u8(1);
    each(this, value);
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** Reads borsh; every short read or trailing byte is a 400 naming `what` is being decoded. */
export class BorshReader {
  private pos = 0;

  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}

  private take(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw badRequest(`${this.what}: truncated at byte ${this.pos}`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  u8(): number {
    return this.take(1)[0]!;
  }

  u32(): number {
    return this.take(4).readUInt32LE();
  }

  u64(): bigint {
    return this.take(8).readBigUInt64LE();
  }

  fixed(n: number): Buffer {
    return Buffer.from(this.take(n));
  }

  hex32(): string {
    return this.fixed(32).toString('hex');
  }

  /** the offset of the next byte (for signatures over a prefix) */
  get offset(): number {
    return this.pos;
  }

  end(): void {
    if (this.pos !== this.buf.length) throw badRequest(`${this.what}: ${this.buf.length - this.pos} trailing bytes`);
  }
}
