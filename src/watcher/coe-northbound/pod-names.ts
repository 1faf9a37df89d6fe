/**
 * Which namespaces have a pod of a given name: NetVirt Sodium's COE renderer names a pod's
 * interface `<cluster-id>:<pod name>` (src/netvirt/coe/gateway.ts), so pods of the same name in
 * different namespaces would get the same interface, and the plan lets only one of them on the
 * network (coe/plan.ts, `podNameHolder`). An index over the cluster view's pods, so a pod's plan
 * and a pod change find the others of its name without scanning every pod.
 *
 * Fed by `view.onChange`, subscribed in the backend's constructor before the core subscribes its
 * key mapping (as service-slices.ts): the index has taken a change in before a key is enqueued.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { SetIndex } from '../../common/set-index.js';
import type { ClusterView } from '../cluster-view.js';

export class PodNames {
  /** pod name → namespaces with a pod of that name. */
  private readonly byName = new SetIndex();

  constructor(private readonly view: ClusterView) {
    view.onChange((change) => {
      if (change.kind !== 'pod') return;
      const { namespace, name } = change.obj.metadata ?? {};
      if (!namespace || !name) return;
      if (view.pod(namespace, name)) this.byName.add(name, namespace);
      else this.byName.remove(name, namespace);
    });
  }

  /** Every pod of this name, in any namespace, by namespace. */
  podsNamed(name: string): V1Pod[] {
    return [...this.byName.get(name)]
      .sort()
      .map((ns) => this.view.pod(ns, name))
      .filter((p): p is V1Pod => p !== undefined);
  }
}
