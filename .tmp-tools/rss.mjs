const { WasmRuntime } = await import('../dist/runtime/runtime.js');
const rss = () => (process.memoryUsage().rss / 1e6).toFixed(1);
console.log('before', rss());
const rt = new WasmRuntime({ poolSize: 2 });
await rt.start();
await new Promise((r) => setTimeout(r, 1000));
console.log('2 workers', rss());
await rt.stop();
