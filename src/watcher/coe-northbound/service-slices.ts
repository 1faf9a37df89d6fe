/**
 * Which EndpointSlices belong to which Service: an index over the cluster view's
 * `endpointslices` informer, by each slice's `kubernetes.io/service-name` label, so a
 * Service's endpoints entry is built from ALL its slices (large Services are split, 100
 * endpoints per slice by default) without scanning every slice of the cluster.
 *
 * EndpointSlices, not Endpoints: they are the API every supported Kubernetes serves
 * (discovery.k8s.io/v1 since 1.21; core/v1 Endpoints is deprecated since 1.33).
 *
 * Fed by `view.onChange`, subscribed in the backend's constructor, before the core subscribes
 * its key mapping: the index takes every change in before a key it names is enqueued.
 */
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { SetIndex } from '../../common/set-index.js';
import type { ClusterView } from '../cluster-view.js';
import { sliceServiceName } from '../../netvirt/coe/translate.js';

export class ServiceSlices {
  /** `namespace/service name` → keys (`namespace/slice name`) of its slices. */
  private readonly byService = new SetIndex();

  constructor(private readonly view: ClusterView) {
    // Re-indexes the changed slice from the informer's store, which already holds the result
    // of the change (gone after a delete): the same for add, update, delete and relist.
    view.onChange((change) => {
      if (change.kind !== 'endpointslice') return;
      const key = keyOf(change.obj);
      for (const slice of [change.old, change.obj]) this.index(slice, key, false);
      this.index(view.endpointSlices?.get(key), key, true);
    });
  }

  /** The EndpointSlices of a Service, by slice name. */
  slicesOf(namespace: string, service: string): V1EndpointSlice[] {
    return [...this.byService.get(`${namespace}/${service}`)]
      .sort()
      .map((key) => this.view.endpointSlices?.get(key))
      .filter((s): s is V1EndpointSlice => s !== undefined);
  }

  private index(slice: V1EndpointSlice | undefined, key: string, add: boolean): void {
    const ns = slice?.metadata?.namespace;
    const service = slice && sliceServiceName(slice);
    if (!ns || !service) return;
    if (add) this.byService.add(`${ns}/${service}`, key);
    else this.byService.remove(`${ns}/${service}`, key);
  }
}

function keyOf(slice: V1EndpointSlice): string {
  return `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
}
