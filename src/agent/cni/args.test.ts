import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCniArgs } from './args.js';
import { CniError } from './error.js';

describe('parseCniArgs', () => {
  it('reads the Kubernetes keys in any order', () => {
    const a = parseCniArgs(
      'K8S_POD_UID=u-1;IgnoreUnknown=1;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_NAMESPACE=shop',
    );
    assert.equal(a.podNamespace, 'shop');
    assert.equal(a.podName, 'web-0');
    assert.equal(a.podUid, 'u-1');
    assert.equal(a.infraContainerId, 'abc');
    assert.equal(a.all.get('IgnoreUnknown'), '1');
  });

  it('accepts podman args (no namespace) and empty input', () => {
    const a = parseCniArgs('IgnoreUnknown=1;K8S_POD_NAME=mycontainer');
    assert.equal(a.podNamespace, undefined);
    assert.equal(a.podName, 'mycontainer');
    assert.equal(parseCniArgs('').all.size, 0);
    assert.equal(parseCniArgs(undefined).all.size, 0);
  });

  it('treats empty values as absent and tolerates a trailing separator', () => {
    const a = parseCniArgs('K8S_POD_UID=;K8S_POD_NAME=p;');
    assert.equal(a.podUid, undefined);
    assert.equal(a.podName, 'p');
  });

  it('keeps "=" inside values', () => {
    assert.equal(parseCniArgs('X=a=b').all.get('X'), 'a=b');
  });

  it('rejects pairs without a key and repeated keys with code 4', () => {
    for (const bad of ['novalue', '=x', 'K8S_POD_NAME=a;K8S_POD_NAME=b']) {
      assert.throws(
        () => parseCniArgs(bad),
        (err: unknown) => err instanceof CniError && err.code === 4,
        bad,
      );
    }
  });
});
