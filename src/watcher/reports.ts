/**
 * What a backend reports when it cannot make ODL what the cluster needs and an operator has to
 * act: a name or uid odlcoe needs is held by an ODL object it does not own, or a Kubernetes
 * object cannot be described in the model. Each is logged, counted or recorded as a Warning
 * Event on the Kubernetes object concerned; ODL is left as it is.
 */
import type { KubeObjectRef } from '../netvirt/plan.js';
import type { BackendContext } from './backend.js';
import type { ReconcileOutcome } from './reconcile.js';

type ReportContext = Pick<BackendContext, 'settings' | 'metrics' | 'logger' | 'events'>;

function describe(involved: KubeObjectRef): string {
  return `${involved.kind} ${involved.namespace ? `${involved.namespace}/` : ''}${involved.name}`;
}

/**
 * A name odlcoe needs is held by an object it does not own: warn, count, and record a Warning
 * Event on the Kubernetes object that needs it. The object is never touched; the returned
 * outcome has the key retried slowly.
 */
export function reportCollision(
  c: ReportContext,
  kind: string,
  name: string,
  reason: string,
  involved: KubeObjectRef,
): ReconcileOutcome {
  c.metrics.collisions.inc({ kind });
  c.logger.warn('ODL object with a name odlcoe needs is not owned by odlcoe; leaving it alone', {
    kind,
    name,
    reason,
    involved: describe(involved),
  });
  c.events.warning(
    involved,
    'ForeignOdlObject',
    `ODL ${kind} ${name} exists but is not owned by odlcoe cluster ${c.settings.clusterName} (${reason}); ` +
      'it is left alone: remove or rename it in ODL, odlcoe retries periodically',
  );
  return { result: 'foreign', retryAfterMs: c.settings.slowRetryMs };
}

/**
 * A Kubernetes object odlcoe cannot describe in the model (its plan says why): warn and record
 * a Warning Event. ODL is left as it is until the object changes, which enqueues its key again.
 */
export function reportUntranslatable(
  c: ReportContext,
  message: string,
  involved: KubeObjectRef,
): ReconcileOutcome {
  c.logger.warn('cannot translate Kubernetes object for ODL; ODL left as it is', {
    object: describe(involved),
    error: message,
  });
  c.events.warning(involved, 'InvalidForOdl', `cannot be written to ODL: ${message}`);
  return { result: 'deferred' };
}
