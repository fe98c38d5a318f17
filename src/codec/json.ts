/**
 * @module codec/json
 *
 * JSON encoding and decoding that never loses 64-bit integers.
 *
 * Neutral ground: the SDK (src/client/, re-exported from its entry) and the server (request bodies,
 * JSON-RPC, WebSocket frames) both use it, so it imports nothing else of src/ — the SDK's closure
 * stays client/ + codec/ (src/layers.test.ts; docs/architecture.md).
 *
 * The node sends u64 values (nonces, counters, sizes, uptime) as bare JSON numbers
 * (README decision "64-bit numbers"). `JSON.parse` turns any integer above
 * 2^53−1 into the nearest double, silently changing it. This decoder keeps such
 * integers exact.
 *
 * Decision: an integer literal (no fraction, no exponent) whose value lies outside
 * the safe range [−(2^53−1), 2^53−1] decodes to a `bigint` (default) or, with
 * `{ bigint: 'string' }`, to its decimal string. Every other number decodes as
 * `JSON.parse` would, so safe integers stay plain `number`s. A u64 field is
 * therefore typed {@link U64} (`number | bigint`). {@link stringifyJson} writes a
 * `bigint` back as a bare integer literal, so values round-trip unchanged.
 *
 * Fast path: text with no run of 16 or more digits cannot hold an unsafe
 * integer (2^53−1 has 16 digits), so it goes straight to `JSON.parse`.
 */

/** A JSON integer that may exceed 2^53−1: a `number` when safe, else a `bigint`. */
export type U64 = number | bigint;

/**
 * Deepest nesting of arrays and objects read or written: serde_json's recursion limit, which the
 * reference node applies to every JSON body, so nothing a reference node accepts is refused here.
 * Deeper documents would exhaust the stack of any recursive consumer (issue #17 finding 6).
 */
export const MAX_JSON_DEPTH = 128;

/** Thrown for a document nested deeper than {@link MAX_JSON_DEPTH}. */
export class JsonDepthError extends SyntaxError {
  override name = 'JsonDepthError';
  constructor(readonly limit: number) {
    super(`JSON nested deeper than ${limit} levels`);
  }
}

/**
 * Whether JSON text nests arrays and objects deeper than `max`, in one pass without recursion
 * (brackets inside strings do not count). Malformed text is left to the parser.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export interface JsonParseOptions {
  /** How to represent integers outside the safe range. Default `'bigint'`. */
  bigint?: 'bigint' | 'string';
}

const LONG_DIGIT_RUN = /\d{16}/;
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;

/** Parses JSON text like `JSON.parse`, keeping unsafe integers exact (see module doc). */
export function parseJson(text: string, options: JsonParseOptions = {}): unknown {
  if (jsonTooDeep(text)) throw new JsonDepthError(MAX_JSON_DEPTH);
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  return new Parser(text, options.bigint ?? 'bigint').parseDocument();
}

class Parser {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly mode: 'bigint' | 'string',
  ) {}

  parseDocument(): unknown {
    const value = this.parseValue();
    this.skipWhitespace();
    if (this.pos !== this.text.length) this.fail('Unexpected data after JSON value');
    return value;
  }

  private parseValue(): unknown {
    this.skipWhitespace();
    const ch = this.text[this.pos];
    if (ch === '{') return this.parseObject();
    if (ch === '[') return this.parseArray();
    if (ch === '"') return this.parseString();
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) return this.parseNumber();
    for (const [word, value] of LITERALS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    return this.fail('Unexpected token');
  }

  private parseObject(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++; // '{'
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.pos] !== '"') this.fail('Expected a property name');
      const key = this.parseString();
      this.skipWhitespace();
      if (this.text[this.pos] !== ':') this.fail("Expected ':'");
      this.pos++;
      const value = this.parseValue();
      // Define rather than assign so a "__proto__" key stays an own property, as with JSON.parse.
      Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
      this.skipWhitespace();
      const sep = this.text[this.pos++];
      if (sep === '}') return out;
      if (sep !== ',') this.fail("Expected ',' or '}'");
    }
  }

  private parseArray(): unknown[] {
    const out: unknown[] = [];
    this.pos++; // '['
    this.skipWhitespace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.parseValue());
      this.skipWhitespace();
      const sep = this.text[this.pos++];
      if (sep === ']') return out;
      if (sep !== ',') this.fail("Expected ',' or ']'");
    }
  }

  private parseString(): string {
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      const ch = this.text[i];
      if (ch === undefined) this.fail('Unterminated string');
      if (ch === '\\') i += 2;
      else if (ch === '"') break;
      else i++;
    }
    this.pos = i + 1;
    // JSON.parse decodes escapes and rejects control characters exactly as the spec requires.
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  private parseNumber(): number | bigint | string {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (!match) return this.fail('Invalid number');
    this.pos = NUMBER.lastIndex;
    const literal = match[0];
    const isInteger = match[1] === undefined && match[2] === undefined;
    if (isInteger) {
      const n = Number(literal);
      if (!Number.isSafeInteger(n)) return this.mode === 'bigint' ? BigInt(literal) : literal;
      return n;
    }
    return Number(literal);
  }

  private skipWhitespace(): void {
    WHITESPACE.lastIndex = this.pos;
    WHITESPACE.exec(this.text);
    this.pos = WHITESPACE.lastIndex;
  }

  private fail(message: string): never {
    throw new SyntaxError(`${message} in JSON at position ${this.pos}`);
  }
}

const LITERALS: ReadonlyArray<readonly [string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/**
 * Serialises like `JSON.stringify(value)`, except that a `bigint` is written as a
 * bare integer literal instead of throwing. Honours `toJSON` (e.g. `Date`).
 */
export function stringifyJson(value: unknown): string {
  return write(value, '', 0) ?? 'null';
}

function write(value: unknown, key: string, depth: number): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  if (depth >= MAX_JSON_DEPTH) throw new JsonDepthError(MAX_JSON_DEPTH);
  if (Array.isArray(value)) {
    return `[${value.map((item, i) => write(item, String(i), depth + 1) ?? 'null').join(',')}]`;
  }
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const encoded = write(v, k, depth + 1);
    if (encoded !== undefined) parts.push(`${JSON.stringify(k)}:${encoded}`);
  }
  return `{${parts.join(',')}}`;
}
