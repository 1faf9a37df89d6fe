import { Counter, Histogram, LATENCY_BUCKETS, metric, type Registry } from '../common/metrics.js';

/** The agent's own metrics (the CNI server, OVS and IPAM adapters' failures, reconcile). */
export class AgentMetrics {
  readonly cniDuration: Histogram<'command' | 'result'>;
  readonly ovsErrors: Counter<'operation'>;
  readonly ipamErrors: Counter<'operation'>;
  readonly reconcileRemoved: Counter<'kind'>;

  constructor(registry: Registry) {
    this.cniDuration = metric(
      registry,
      'odlcoe_agent_cni_request_duration_seconds',
      () =>
        new Histogram({
          name: 'odlcoe_agent_cni_request_duration_seconds',
          help: 'CNI requests served by the agent, by command and result (ok or the CNI error code)',
          labelNames: ['command', 'result'] as const,
          buckets: LATENCY_BUCKETS,
          registers: [],
        }),
    );
    this.ovsErrors = metric(
      registry,
      'odlcoe_agent_ovs_errors_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_ovs_errors_total',
          help: 'Failed Open vSwitch operations, by operation',
          labelNames: ['operation'] as const,
          registers: [],
        }),
    );
    this.ipamErrors = metric(
      registry,
      'odlcoe_agent_ipam_errors_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_ipam_errors_total',
          help: 'Failed host-local IPAM operations, by operation',
          labelNames: ['operation'] as const,
          registers: [],
        }),
    );
    this.reconcileRemoved = metric(
      registry,
      'odlcoe_agent_reconcile_removed_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_reconcile_removed_total',
          help: 'Stale attachments removed by reconcile and GC, by kind (port, lease)',
          labelNames: ['kind'] as const,
          registers: [],
        }),
    );
  }

  /** Runs `op`, counting a failure under `counter{operation}` before rethrowing it. */
  async count<T>(counter: Counter<'operation'>, operation: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      counter.inc({ operation });
      throw err;
    }
  }
}
