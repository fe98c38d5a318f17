/**
 * The runtime's running counters and their metric series (`hearth_runtime_*`, /metrics and the
 * benches), apart from the pool that counts them (runtime.ts).
 */
import { threadCpuSecs } from './bridge-server.ts';

/** Running totals since start. */
export interface RuntimeStats {
  /** calls a worker finished (answered or abandoned) */
  calls: number;
  /** instances the workers created (a kept instance is created once per module and worker) */
  instancesCreated: number;
  /** reads and blob operations a worker asked the main thread for, blocking */
  roundTrips: number;
  /** calls whose caller went away (client disconnected) while a worker ran them: answered `Aborted`, the worker let finish */
  abandoned: number;
  /** calls a worker took with others of their context in one message (batch-run.ts), and those messages */
  batched: { calls: number; batches: number };
  /** workers terminated and replaced, by why */
  replaced: Record<'deadline' | 'error' | 'exit', number>;
}

export const newRuntimeStats = (): RuntimeStats => ({ calls: 0, instancesCreated: 0, roundTrips: 0, abandoned: 0, batched: { calls: 0, batches: 0 }, replaced: { deadline: 0, error: 0, exit: 0 } });

export interface MetricSeries {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  read: () => Array<{ labels?: Record<string, string>; value: number }>;
}

/** What the series read besides the counters, each read when /metrics is asked. */
export interface PoolGauges {
  retired(): number;
  /** the Linux thread id of each pool slot's worker, once it is up */
  workerTids(): Array<number | undefined>;
  throttledContexts(): number;
  coolDowns(): number;
}

export function runtimeSeries(st: RuntimeStats, pool: PoolGauges): MetricSeries[] {
  return [
    { name: 'hearth_runtime_calls_total', help: 'Application calls the runtime workers finished', type: 'counter', read: () => [{ value: st.calls }] },
    { name: 'hearth_runtime_instances_created_total', help: 'WebAssembly instances created (a kept instance serves many calls)', type: 'counter', read: () => [{ value: st.instancesCreated }] },
    { name: 'hearth_runtime_round_trips_total', help: 'Blocking reads a worker asked the main thread for', type: 'counter', read: () => [{ value: st.roundTrips }] },
    { name: 'hearth_runtime_calls_abandoned_total', help: 'Calls whose caller went away while running (the worker was let finish)', type: 'counter', read: () => [{ value: st.abandoned }] },
    { name: 'hearth_runtime_batched_calls_total', help: 'Read-only calls a worker took with others of their context in one message', type: 'counter', read: () => [{ value: st.batched.calls }] },
    { name: 'hearth_runtime_batches_total', help: 'Messages that handed a worker more than one call', type: 'counter', read: () => [{ value: st.batched.batches }] },
    {
      name: 'hearth_runtime_workers_replaced_total',
      help: 'Runtime workers terminated and replaced, by reason',
      type: 'counter',
      read: () => Object.entries(st.replaced).map(([reason, value]) => ({ labels: { reason }, value })),
    },
    { name: 'hearth_runtime_workers_retired_total', help: 'Runtime workers terminated after being idle (worker-retire.ts)', type: 'counter', read: () => [{ value: pool.retired() }] },
    { name: 'hearth_runtime_workers', help: 'Runtime workers started', type: 'gauge', read: () => [{ value: pool.workerTids().length }] },
    { name: 'hearth_runtime_contexts_throttled', help: 'Contexts held to one worker or cooling down after calls stopped at their deadline', type: 'gauge', read: () => [{ value: pool.throttledContexts() }] },
    { name: 'hearth_runtime_cool_downs_total', help: 'Cool-downs begun by contexts whose calls kept running past their deadline', type: 'counter', read: () => [{ value: pool.coolDowns() }] },
    {
      name: 'hearth_runtime_worker_cpu_seconds',
      help: 'CPU time of the worker thread on each pool slot (Linux; a replaced worker starts at 0)',
      type: 'gauge',
      read: () => pool.workerTids().flatMap((tid, i) => {
        const cpu = tid === undefined ? undefined : threadCpuSecs(tid);
        return cpu === undefined ? [] : [{ labels: { slot: String(i) }, value: cpu }];
      }),
    },
  ];
}
