/**
 * libp2p 3 calls `Promise.withResolvers`, which Node.js ships from 22; hearth runs on Node.js 20.
 * Every module of `src/network/` that imports libp2p imports this module first, so the function
 * exists before any libp2p code runs. A no-op where the runtime has it.
 */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const P = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };

if (typeof P.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
