import { describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from './network-port.ts';
import { ByteReader, FramingError, MAX_REASON_BYTES, readBody, readRequestLength, readResponse, refusalFrame, requestFrame, responseFrame, TAG } from './frames.ts';

function reader(highWater = 1024) {
  const source = { paused: false, pause: () => void (source.paused = true), resume: () => void (source.paused = false) };
  return { r: new ByteReader(source, highWater), source };
}

describe('ByteReader', () => {
  it('reads exact counts across chunk boundaries', async () => {
    const { r } = reader();
    const got = r.read(5);
    r.push(new Uint8Array([1, 2]));
    r.push(new Uint8Array([3, 4, 5, 6]));
    expect([...(await got)!]).toEqual([1, 2, 3, 4, 5]);
    expect(r.buffered).toBe(1);
  });

  it('ends cleanly with null, cut short inside a read, or with the stream error after the buffered bytes', async () => {
    const a = reader().r;
    a.end();
    expect(await a.read(4)).toBeNull();
    const b = reader().r;
    b.push(new Uint8Array(2));
    b.end();
    await expect(b.read(4)).rejects.toMatchObject({ problem: 'cut_short' });
    const c = reader().r;
    c.push(new Uint8Array([9]));
    c.end(new Error('reset'));
    expect([...(await c.read(1))!]).toEqual([9]);
    await expect(c.read(1)).rejects.toThrow('reset');
  });

  it('pauses its source past the high-water mark and resumes it as it is read', async () => {
    const { r, source } = reader(4);
    r.push(new Uint8Array(6));
    expect(source.paused).toBe(true);
    await r.read(3);
    expect(source.paused).toBe(false);
    r.push(new Uint8Array(6)); // 9 buffered: paused again
    const big = r.read(12); // needs more than is buffered: the source must go on
    expect(source.paused).toBe(false);
    r.push(new Uint8Array(3));
    expect((await big)!.byteLength).toBe(12);
  });
});

describe('ByteReader with a source that delivers as it resumes', () => {
  it('completes a read larger than the high-water mark (no lost wake-up)', async () => {
    // like a libp2p stream: resuming hands over what it buffered at once, then sends on
    let r!: ByteReader;
    let paused = false;
    const send = () => {
      if (paused) return;
      r.push(new Uint8Array(3));
      setImmediate(send);
    };
    r = new ByteReader(
      {
        pause: () => void (paused = true),
        resume: () => {
          paused = false;
          send();
        },
      },
      4,
    );
    send();
    await new Promise((resolve) => setTimeout(resolve, 5)); // past the mark: paused
    expect(paused).toBe(true);
    expect((await r.read(20))!.byteLength).toBe(20);
    paused = true; // stop the sender
  });
});

describe('frames', () => {
  it('round-trips a request frame, and reads its length before its body', async () => {
    const { r } = reader();
    r.push(requestFrame(new Uint8Array([7, 8, 9])));
    expect(await readRequestLength(r)).toBe(3);
    expect([...(await readBody(r, 3))]).toEqual([7, 8, 9]);
  });

  it('reads DATA, END, REFUSED and TOO_LARGE response frames', async () => {
    const { r } = reader();
    r.push(responseFrame(TAG.data, new Uint8Array([1])));
    r.push(refusalFrame(TAG.refused, 'no'));
    r.push(refusalFrame(TAG.tooLarge, 'big'));
    r.push(responseFrame(TAG.end));
    expect(await readResponse(r, 10)).toEqual({ tag: TAG.data, body: new Uint8Array([1]) });
    expect(await readResponse(r, 10)).toEqual({ tag: TAG.refused, reason: 'no' });
    expect(await readResponse(r, 10)).toEqual({ tag: TAG.tooLarge, reason: 'big' });
    expect(await readResponse(r, 10)).toEqual({ tag: TAG.end });
  });

  it('cuts a long refusal reason to its bound', () => {
    expect(refusalFrame(TAG.refused, 'x'.repeat(5000)).byteLength).toBe(5 + MAX_REASON_BYTES);
  });

  it('rejects bad response framing from the header alone', async () => {
    const cases: [Uint8Array, string, number][] = [
      [responseFrame(TAG.data, new Uint8Array(11)), 'oversized', 10],
      [new Uint8Array([0, 0xff, 0xff, 0xff, 0xff]), 'oversized', MAX_FRAME_BYTES * 2],
      [new Uint8Array([9, 0, 0, 0, 0]), 'bad_tag', 10],
      [new Uint8Array([TAG.end, 0, 0, 0, 1, 0]), 'bad_tag', 10],
      [new Uint8Array([TAG.refused, 0, 1, 0, 0]), 'bad_tag', 10],
      [new Uint8Array([TAG.data, 0, 0]), 'cut_short', 10],
    ];
    for (const [bytes, problem, max] of cases) {
      const { r } = reader();
      r.push(bytes);
      r.end();
      const err = await readResponse(r, max).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FramingError);
      expect((err as FramingError).problem).toBe(problem);
    }
  });
});
