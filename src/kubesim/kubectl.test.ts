import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SimClient } from './testing.js';
import { pod, rejects, startSimClient } from './testing.js';

const KUBECTL = '/usr/bin/kubectl';

const SKIP = existsSync(KUBECTL) ? false : `${KUBECTL} is not installed`;

/** Runs kubectl with an argument array (no shell), its own HOME and cache, and a kubeconfig. */
function runKubectl(
  dir: string,
  kubeconfig: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('the real kubectl against kubesim (plain HTTP)', { skip: SKIP }, () => {
  let c: SimClient;
  let dir: string;
  let kubeconfig: string;
  const kubectl = (...args: string[]) => runKubectl(dir, kubeconfig, args);

  before(async () => {
    // No token: client-go (so kubectl) sends credentials only over TLS (see the TLS suite).
    c = await startSimClient();
    dir = mkdtempSync(join(tmpdir(), 'kubesim-kubectl-'));
    kubeconfig = join(dir, 'kubeconfig');
    c.sim.writeKubeconfig(kubeconfig);
  });
  after(async () => {
    await c.sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates from a manifest without --validate=false', async () => {
    const manifest = join(dir, 'objects.yaml');
    writeFileSync(
      manifest,
      [
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n',
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    app: web\nspec:\n  nodeName: node-1\n  containers:\n  - name: c\n    image: nginx\n',
        'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\n  namespace: shop\nspec:\n  podSelector: {}\n',
      ].join('---\n'),
    );
    const result = await kubectl('create', '-f', manifest);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /namespace\/shop created/);
    assert.match(result.stdout, /pod\/web created/);
    assert.match(result.stdout, /networkpolicy.networking.k8s.io\/deny created/);
    const created = await c.core.readNamespacedPod({ name: 'web', namespace: 'shop' });
    assert.equal(created.spec?.nodeName, 'node-1');
  });

  it('gets pods across all namespaces and as JSON', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('other') });
    const table = await kubectl('get', 'pods', '-A');
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.trim().split('\n');
    assert.match(rows[0] ?? '', /^NAMESPACE\s+NAME\s+AGE/);
    assert.ok(
      rows.some((r) => /^shop\s+web\s/.test(r)),
      table.stdout,
    );
    assert.ok(
      rows.some((r) => /^default\s+other\s/.test(r)),
      table.stdout,
    );

    const json = await kubectl(
      'get',
      'pods',
      '-n',
      'shop',
      '-l',
      'app=web',
      '--field-selector',
      'spec.nodeName=node-1',
      '-o',
      'json',
    );
    assert.equal(json.code, 0, json.stderr);
    const list = JSON.parse(json.stdout) as { items: { metadata: { name: string } }[] };
    assert.deepEqual(
      list.items.map((p) => p.metadata.name),
      ['web'],
    );
    const shortName = await kubectl('get', 'ns', 'shop', '-o', 'name');
    assert.equal(shortName.stdout.trim(), 'namespace/shop');
  });

  it('patches with merge, strategic and JSON patches', async () => {
    const merge = await kubectl(
      'patch',
      'pod',
      'web',
      '-n',
      'shop',
      '--type',
      'merge',
      '-p',
      '{"metadata":{"labels":{"patched":"merge"}}}',
    );
    assert.equal(merge.code, 0, merge.stderr);
    assert.match(merge.stdout, /pod\/web patched/);
    const strategic = await kubectl(
      'patch',
      'pod',
      'web',
      '-n',
      'shop',
      '-p',
      '{"metadata":{"annotations":{"note":"smp"}}}',
    );
    assert.equal(strategic.code, 0, strategic.stderr);
    const json = await kubectl(
      'patch',
      'pod',
      'web',
      '-n',
      'shop',
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/metadata/labels/app","value":"web2"}]',
    );
    assert.equal(json.code, 0, json.stderr);
    const patched = await c.core.readNamespacedPod({ name: 'web', namespace: 'shop' });
    assert.deepEqual(patched.metadata?.labels, { app: 'web2', patched: 'merge' });
    assert.deepEqual(patched.metadata?.annotations, { note: 'smp' });
  });

  it('deletes a bound pod gracefully, then with --force, and reports server errors as kubectl does', async () => {
    // Bound to node-1: the pod is only marked (Terminating) until a grace-0 delete, as kubelet sends.
    const marked = await kubectl('delete', 'pod', 'web', '-n', 'shop', '--wait=false');
    assert.equal(marked.code, 0, marked.stderr);
    assert.match(marked.stdout, /pod "web" deleted/);
    const terminating = await c.core.readNamespacedPod({ name: 'web', namespace: 'shop' });
    assert.equal(terminating.metadata?.deletionGracePeriodSeconds, 30);
    const forced = await kubectl('delete', 'pod', 'web', '-n', 'shop', '--grace-period=0', '--force');
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /pod "web" force deleted/);
    await rejects(() => c.core.readNamespacedPod({ name: 'web', namespace: 'shop' }), 404);
    const missing = await kubectl('get', 'pod', 'web', '-n', 'shop');
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /NotFound.*pods "web" not found/);
    // Empty now but for the network policy, which the namespace deletion takes along.
    const ns = await kubectl('delete', 'namespace', 'shop');
    assert.equal(ns.code, 0, ns.stderr);
    await rejects(() => c.core.readNamespace({ name: 'shop' }), 404);
  });

  it('refuses the protobuf body of kubectl create namespace with the API server error', async () => {
    const created = await kubectl('create', 'namespace', 'from-generator');
    assert.notEqual(created.code, 0);
    assert.match(
      created.stderr,
      /Error from server \(UnsupportedMediaType\): the body of the request was in an unknown format - accepted media types include: application\/json/,
    );
    await rejects(() => c.core.readNamespace({ name: 'from-generator' }), 404);
    // The same namespace from YAML (JSON on the wire) works.
    const manifest = join(dir, 'ns.yaml');
    writeFileSync(manifest, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-generator\n');
    const fromYaml = await kubectl('create', '-f', manifest);
    assert.equal(fromYaml.code, 0, fromYaml.stderr);
  });
});

describe('kubectl and client-node over TLS with a token', { skip: SKIP }, () => {
  let c: SimClient;
  let dir: string;
  before(async () => {
    c = await startSimClient({ tls: true, token: 'tls-token' });
    dir = mkdtempSync(join(tmpdir(), 'kubesim-kubectl-tls-'));
  });
  after(async () => {
    await c.sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the simulator certificate and authenticates with the token', async () => {
    assert.match(c.sim.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.doesNotMatch(c.sim.kubeconfig(), /insecure-skip-tls-verify/);
    // client-node verifies the certificate against the kubeconfig's CA.
    assert.ok((await c.core.listNamespace()).items.length >= 4);

    const good = join(dir, 'good');
    c.sim.writeKubeconfig(good);
    const ok = await runKubectl(dir, good, ['get', 'namespaces', '-o', 'name']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /namespace\/kube-system/);

    const bad = join(dir, 'bad');
    writeFileSync(bad, c.sim.kubeconfig().replace('token: tls-token', 'token: wrong'));
    const denied = await runKubectl(dir, bad, ['get', 'namespaces']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /Unauthorized|must be logged in/);
  });
});
