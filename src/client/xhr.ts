/**
 * @module client/xhr
 *
 * A `fetch` that reports upload progress. Browsers give `fetch` no upload progress (and stream a
 * request body only over HTTP/2), so a call that asks for progress (`onUploadProgress`) is sent
 * with `XMLHttpRequest` where one exists; the answer comes back as a standard `Response`, so the
 * HTTP core treats it like any other (refresh, revocation, errors). Elsewhere (Node) calls use
 * `fetch` as usual.
 */

/** `(bytes sent, total bytes or undefined when unknown)` */
export type UploadProgressFn = (loaded: number, total: number | undefined) => void;

/** Statuses whose responses have no body (the `Response` constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function hasXhr(): boolean {
  return typeof XMLHttpRequest !== 'undefined';
}

function headersOf(raw: string): Headers {
  const headers = new Headers();
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const at = line.indexOf(':');
    if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return headers;
}

/** A `fetch`-shaped function over XMLHttpRequest that calls `onProgress` as the body is sent. */
export function xhrFetch(onProgress: UploadProgressFn): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      xhr.open(init.method ?? 'GET', String(input instanceof Request ? input.url : input));
      xhr.responseType = 'arraybuffer';
      new Headers(init.headers).forEach((value, name) => xhr.setRequestHeader(name, value));
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : undefined);
      const onAbort = () => xhr.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => signal?.removeEventListener('abort', onAbort);
      xhr.onload = () => {
        settle();
        const body = NULL_BODY.has(xhr.status) ? null : (xhr.response as ArrayBuffer);
        resolve(new Response(body, { status: xhr.status, statusText: xhr.statusText, headers: headersOf(xhr.getAllResponseHeaders()) }));
      };
      xhr.onerror = () => {
        settle();
        reject(new TypeError('network error'));
      };
      xhr.onabort = () => {
        settle();
        reject(signal?.reason ?? new DOMException('aborted', 'AbortError'));
      };
      xhr.send((init.body ?? null) as XMLHttpRequestBodyInit | null);
    });
}
