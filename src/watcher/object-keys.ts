/**
 * The keys both backends name the same way (each backend's key module re-exports them): a pod
 * by namespace and name, a node by uid. Shared so that what both backends do for a node's
 * k8s-node entry (reconcile-node.ts) can enqueue the node and its pods.
 */
export const podKey = (namespace: string, name: string): string => `pod/${namespace}/${name}`;
export const nodeKey = (uid: string): string => `node/${uid}`;
