import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/k8s/kube-client.js';
import { startKubeSim, type KubeSim, type KubeSimOptions } from '../../src/kubesim/server.js';

/**
 * The Kubernetes API simulator on 127.0.0.1 (port 0 unless told) with odlcoe's own client wired
 * to it through the kubeconfig the simulator hands out, as the watcher and the agent connect.
 */
export interface SimApi {
  sim: KubeSim;
  kubeConfig: KubeConfig;
  api: KubeClient;
}

export async function startSimApi(options: KubeSimOptions = {}): Promise<SimApi> {
  const sim = await startKubeSim({ port: 0, ...options });
  return { sim, ...kubeApiOf(sim) };
}

/** odlcoe's client for a simulator someone else started. */
export function kubeApiOf(sim: KubeSim): { kubeConfig: KubeConfig; api: KubeClient } {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sim.kubeconfig());
  return { kubeConfig, api: new KubeClient(kubeConfig) };
}
