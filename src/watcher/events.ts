/**
 * The watcher's Kubernetes Events (src/k8s/event-recorder.ts), recorded as `odlcoe-watcher`:
 * what an operator must act on, such as a foreign ODL object holding a name a pod, Service,
 * namespace or node needs, or a node subnet pool used up.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import { WATCHER_EVENT_COMPONENT } from '../config/watcher-settings.js';
import { KubeEventRecorder as Recorder } from '../k8s/event-recorder.js';

export type { EventRecorder, InvolvedObject } from '../k8s/event-recorder.js';

export class KubeEventRecorder extends Recorder {
  constructor(
    kubeConfig: KubeConfig,
    logger: Logger,
    host: string,
    minIntervalMs = 60_000,
    now: () => number = Date.now,
  ) {
    super(kubeConfig, logger, host, WATCHER_EVENT_COMPONENT, minIntervalMs, now);
  }
}
