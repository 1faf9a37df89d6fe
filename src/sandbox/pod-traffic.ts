/**
 * TCP and UDP between two pods, for real: an HTTP server and a UDP echo in one pod's network
 * namespace, an HTTP GET and a datagram from the other's (src/sandbox/pod-traffic-main.ts,
 * started with `nsenter --net=<netns>`, never through a shell). Ping alone proves little: ICMP
 * passes where TCP and UDP fail, e.g. with TX checksum offload on the userspace datapath
 * (src/ovs/datapath.ts).
 */
import { run } from '../common/exec.js';
import { errorMessage } from '../common/log.js';
import { podOffloadPolicy } from '../ovs/datapath.js';
import { validateNetnsPath } from '../ovs/names.js';
import { Ovs } from '../ovs/ovs.js';
import { withinNode, type PairResult } from './datapath.js';
import type { PodSandbox } from './pod-runtime.js';
import type { ExchangeResult } from './pod-traffic-main.js';
import { startDaemon } from './processes.js';
import { programCommand } from './programs.js';

export type { ExchangeResult };

export interface PodTraffic {
  tcp: ExchangeResult;
  udp: ExchangeResult;
}

export interface PodTrafficOptions {
  /** The port of both the HTTP server and the UDP echo in the serving pod. Default 8080. */
  port?: number;
  /** How long each exchange may take. Default 5 s. */
  timeoutMs?: number;
  /** Where the server's output goes. Default /dev/null. */
  logFile?: string;
}

/** An HTTP GET and a UDP echo from the pod at `fromNetns` to `toIp`, served in `toNetns`. */
export async function exchangeTraffic(
  fromNetns: string,
  toNetns: string,
  toIp: string,
  opts: PodTrafficOptions = {},
): Promise<PodTraffic> {
  const port = String(opts.port ?? 8080);
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const failed = (error: string): PodTraffic => ({ tcp: { ok: false, error }, udp: { ok: false, error } });
  const server = programCommand('src/sandbox/pod-traffic-main', ['serve', '--port', port]);
  let daemon;
  try {
    daemon = await startDaemon(
      'nsenter',
      [`--net=${validateNetnsPath(toNetns)}`, server.command, ...server.args],
      {
        cwd: server.cwd,
        logFile: opts.logFile ?? '/dev/null',
        readyLine: 'ready',
        readyTimeoutMs: 30_000,
      },
    );
  } catch (err) {
    return failed(`the server in ${toNetns} did not start: ${errorMessage(err)}`);
  }
  try {
    const probe = programCommand('src/sandbox/pod-traffic-main', [
      'probe',
      '--to',
      toIp,
      '--port',
      port,
      '--timeout-ms',
      String(timeoutMs),
    ]);
    const { stdout } = await run(
      'nsenter',
      [`--net=${validateNetnsPath(fromNetns)}`, probe.command, ...probe.args],
      {
        timeoutMs: timeoutMs + 30_000,
      },
    );
    return JSON.parse(stdout) as PodTraffic;
  } catch (err) {
    return failed(`the client in ${fromNetns} failed: ${errorMessage(err)}`);
  } finally {
    await daemon.stop(2_000);
  }
}

export type TrafficResult = PairResult<PodTraffic>;

/** From the node's first pod (by name) to every other pod of the node, as pingWithinNode. */
export function trafficWithinNode(
  node: string,
  sandboxes: readonly PodSandbox[],
  opts: PodTrafficOptions = {},
): Promise<TrafficResult[]> {
  return withinNode(node, sandboxes, (from, to) =>
    exchangeTraffic(from.netns.path, to.netns.path, to.ip, opts),
  );
}

/** One line on what the node's datapath needs of pod interfaces, for the summary. */
export async function podOffloadSummary(dbSocket: string, bridge: string): Promise<string> {
  const ovs = new Ovs({ dbSocket, timeoutSeconds: 10 });
  try {
    const facts = await ovs.datapath(bridge);
    const policy = podOffloadPolicy(facts);
    const tso = facts.datapathType === 'netdev' ? `, userspace-tso-enable ${facts.userspaceTso}` : '';
    return `pod interfaces: TX checksum offload ${policy.txChecksum === 'turn-off' ? 'turned off' : 'left on'} (datapath ${facts.datapathType}${tso})`;
  } catch (err) {
    return `pod interfaces: the datapath of ${bridge} could not be read (${errorMessage(err)})`;
  } finally {
    ovs.close();
  }
}
