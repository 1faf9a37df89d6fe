/**
 * A kubeconfig for the simulator. Over TLS it trusts the simulator's own certificate (embedded
 * as the CA). Over plain HTTP it sets `insecure-skip-tls-verify: true`, without which
 * client-node 1.x refuses an http:// server (there is no TLS to verify).
 */
import { stringify } from 'yaml';

/** `ca`: the PEM certificate to trust when the simulator serves TLS. */
export function kubeconfigText(url: string, token: string | undefined, ca: string | undefined): string {
  const cluster =
    ca === undefined
      ? { server: url, 'insecure-skip-tls-verify': true }
      : { server: url, 'certificate-authority-data': Buffer.from(ca).toString('base64') };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kubesim', cluster }],
    users: [{ name: 'kubesim', user: token === undefined ? {} : { token } }],
    contexts: [{ name: 'kubesim', context: { cluster: 'kubesim', user: 'kubesim', namespace: 'default' } }],
    'current-context': 'kubesim',
    preferences: {},
  });
}
