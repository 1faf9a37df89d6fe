/**
 * The agent's side of the pod interfaces' TX checksum offload (why it may have to go:
 * src/ovs/datapath.ts): the policy of its bridge, read again with every OVS set-up; whether
 * `ethtool` can be run when the policy needs it; turning offload off during ADD; and whether
 * the kernel refused to. ADD waits while `notReadyReason()` says why it cannot succeed;
 * `ready()` is the readiness check.
 */
import type { Logger } from '../common/log.js';
import { CommandError } from '../common/exec.js';
import { podOffloadPolicy, type PodOffloadPolicy } from '../ovs/datapath.js';
import type { Ovs } from '../ovs/ovs.js';
import { ChecksumOffloadError, ethtoolProblem, turnTxChecksumOffloadOff } from '../ovs/pod-interface.js';
import type { StepTimer } from './metrics.js';

export interface PodChecksumOffloadOptions {
  ovs: Pick<Ovs, 'datapath'>;
  bridge: string;
  logger: Logger;
}

export class PodChecksumOffload {
  private policy: PodOffloadPolicy | undefined;
  /** Why ethtool cannot be run (checked at the first refresh that needs it, then while failing). */
  private ethtoolProblem: string | undefined;
  private probed = false;
  /** The kernel kept offload on for the last pod interface (cleared by the next success). */
  private refused: string | undefined;

  constructor(private readonly options: PodChecksumOffloadOptions) {}

  /** Reads the datapath facts again; probes `ethtool` while the policy needs it and it failed. */
  async refresh(): Promise<void> {
    const { ovs, bridge, logger } = this.options;
    const policy = podOffloadPolicy(await ovs.datapath(bridge));
    if (policy.why !== this.policy?.why) {
      logger.info(
        policy.txChecksum === 'turn-off'
          ? 'pod interfaces get TX checksum offload turned off'
          : 'pod interfaces keep TX checksum offload',
        { reason: policy.why },
      );
    }
    this.policy = policy;
    if (policy.txChecksum !== 'turn-off') this.refused = undefined;
    else if (!this.probed || this.ethtoolProblem !== undefined) {
      this.probed = true;
      this.ethtoolProblem = await ethtoolProblem();
      if (this.ethtoolProblem) logger.error('ethtool cannot be run', { error: this.ethtoolProblem });
    }
  }

  /** Whether interfaces on the bridge must have TX checksum offload off (known after the first refresh). */
  turnsOff(): boolean {
    return this.policy?.txChecksum === 'turn-off';
  }

  /** Why an ADD cannot wire a pod correctly now, or undefined. */
  notReadyReason(): string | undefined {
    if (this.policy?.txChecksum !== 'turn-off' || this.ethtoolProblem === undefined) return undefined;
    return (
      `TX checksum offload cannot be turned off on pod interfaces (${this.ethtoolProblem}), and ` +
      `${this.policy.why}: TCP and UDP between pods would fail. Install ethtool where the agent runs, ` +
      `or restart ovs-vswitchd with other_config:userspace-tso-enable=true`
    );
  }

  /** The readiness check: true, or throws with what is wrong. */
  ready(): boolean {
    const reason = this.notReadyReason() ?? this.refused;
    if (reason) throw new Error(reason);
    return true;
  }

  /**
   * During ADD, once the pod's interface exists: turns its offload off when the policy says so
   * (timed as the step `checksum_offload`).
   */
  async preparePodInterface(netns: string, ifName: string, timer?: StepTimer): Promise<void> {
    const policy = this.policy;
    if (policy?.txChecksum !== 'turn-off') return;
    try {
      await (timer
        ? timer.time('checksum_offload', () => turnTxChecksumOffloadOff(netns, ifName))
        : turnTxChecksumOffloadOff(netns, ifName));
      this.refused = undefined;
    } catch (err) {
      // Node-wide causes are kept for readiness; a pod's own (its namespace vanished) only fail its ADD.
      if (err instanceof ChecksumOffloadError) {
        this.refused = `TX checksum offload stayed on for the last pod interface (${err.message}), and ${policy.why}: that ADD failed`;
      } else if (err instanceof CommandError && /failed to execute ethtool/.test(err.stderr)) {
        this.ethtoolProblem = err.stderr.trim();
      }
      throw err;
    }
  }
}
