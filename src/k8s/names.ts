/**
 * Kubernetes object names as the API server enforces them, checked before they go into an
 * OVSDB query, an external_id or a URL (the agent's ADD, odlcoectl trace): a request naming an
 * object Kubernetes could not hold fails here with a precise message.
 */
import { NameError } from '../common/name-error.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Kubernetes rules: namespace is a DNS-1123 label, pod name a DNS-1123 subdomain. */
export function validatePodRef(namespace: string, name: string): void {
  if (typeof namespace !== 'string' || namespace.length === 0) {
    throw new NameError('podNamespace', String(namespace), 'must not be empty');
  }
  if (namespace.length > 63) throw new NameError('podNamespace', namespace, 'longer than 63 characters');
  if (!DNS1123_LABEL.test(namespace)) {
    throw new NameError(
      'podNamespace',
      namespace,
      'must be a DNS-1123 label (lower-case letters, digits, "-")',
    );
  }
  if (typeof name !== 'string' || name.length === 0)
    throw new NameError('podName', String(name), 'must not be empty');
  if (name.length > 253) throw new NameError('podName', name, 'longer than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(name)) {
    throw new NameError(
      'podName',
      name,
      'must be a DNS-1123 subdomain (lower-case letters, digits, "-", ".")',
    );
  }
}
