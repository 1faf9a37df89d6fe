import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects
 * (client-go's MetaNamespaceKeyFunc). Throws for an object without a name, which the API
 * server never sends; an informer treats that as a broken stream.
 */
export function objectKey(obj: KubernetesObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`${obj.kind ?? 'object'} without metadata.name`);
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/** The object's resourceVersion; an opaque string, compared only for equality. */
export function resourceVersionOf(obj: KubernetesObject): string {
  return obj.metadata?.resourceVersion ?? '';
}
