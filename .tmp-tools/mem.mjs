const N = 3000;
for (const opts of [{ initial: 1 }, { initial: 1, maximum: 1024 }, { initial: 17, maximum: 1024 }]) {
  let t = performance.now();
  for (let i = 0; i < N; i++) new WebAssembly.Memory(opts);
  console.log(JSON.stringify(opts), ((performance.now() - t) / N * 1000).toFixed(1), 'us');
}
