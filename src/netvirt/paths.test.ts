import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodePath, memberName } from '../restconf/path.js';
import { netvirtPaths } from './paths.js';

const b = (p: Parameters<typeof encodePath>[0]) => encodePath(p, 'bierman02');

describe('netvirt paths (URLs of netvirt-model.md, bierman02)', () => {
  const s = netvirtPaths('sodium');
  const a = netvirtPaths('aluminium');

  it('addresses Genius and ELAN entries the same in both profiles', () => {
    for (const p of [s, a]) {
      assert.equal(b(p.interface('default:nginx-1')), 'ietf-interfaces:interfaces/interface/default:nginx-1');
      assert.equal(b(p.interfaces()), 'ietf-interfaces:interfaces');
      assert.equal(
        b(p.elanInstance('192.168.56.101:default')),
        'elan:elan-instances/elan-instance/192.168.56.101:default',
      );
      assert.equal(b(p.elanInstances()), 'elan:elan-instances');
      assert.equal(
        b(p.elanInterface('default:nginx-1')),
        'elan:elan-interfaces/elan-interface/default:nginx-1',
      );
      assert.equal(b(p.elanInterfaces()), 'elan:elan-interfaces');
    }
  });

  it('puts Sodium VPNs in l3vpn with the odl-l3vpn adjacency augment', () => {
    assert.equal(b(s.vpnInstance('default')), 'l3vpn:vpn-instances/vpn-instance/default');
    assert.equal(b(s.vpnInstances()), 'l3vpn:vpn-instances');
    assert.equal(b(s.vpnInterface('default:nginx-1')), 'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1');
    assert.equal(b(s.vpnInterfaces()), 'l3vpn:vpn-interfaces');
    assert.equal(
      b(s.adjacency('default:nginx-1', '10.11.1.5/32')),
      'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1/odl-l3vpn:adjacency/10.11.1.5%2F32',
    );
    assert.equal(memberName(s.adjacency('x', '10.11.1.5/32')), 'odl-l3vpn:adjacency');
  });

  it('puts Aluminium VPNs and their unprefixed adjacency in l3vpn-instances-interfaces', () => {
    assert.equal(
      b(a.vpnInstance('default')),
      'l3vpn-instances-interfaces:vpn-instances/vpn-instance/default',
    );
    assert.equal(
      b(a.vpnInterface('default:nginx-1')),
      'l3vpn-instances-interfaces:vpn-interfaces/vpn-interface/default:nginx-1',
    );
    assert.equal(
      b(a.adjacency('default:nginx-1', 'fd00::5/128')),
      'l3vpn-instances-interfaces:vpn-interfaces/vpn-interface/default:nginx-1/adjacency/fd00::5%2F128',
    );
    assert.equal(memberName(a.adjacency('x', '10.11.1.5/32')), 'l3vpn-instances-interfaces:adjacency');
  });

  it('addresses DHCP pools, NAT router ports and the COE models', () => {
    assert.equal(
      b(s.dhcpNetwork('192.168.56.101:default')),
      'dhcp_allocation_pool:dhcp_allocation_pool/network/192.168.56.101:default',
    );
    assert.equal(
      b(s.allocationPool('n1', '10.11.1.0/24')),
      'dhcp_allocation_pool:dhcp_allocation_pool/network/n1/allocation-pool/10.11.1.0%2F24',
    );
    assert.equal(b(s.dhcpAllocationPool()), 'dhcp_allocation_pool:dhcp_allocation_pool');
    assert.equal(b(s.routerPorts('r1')), 'odl-nat:floating-ip-info/router-ports/r1');
    assert.equal(b(s.floatingIpInfo()), 'odl-nat:floating-ip-info');
    const uid = 'c0ffee00-0000-4000-8000-000000000001';
    assert.equal(b(s.coePod(uid)), `pod:coe/pods/${uid}`);
    assert.equal(b(s.coePods()), 'pod:coe');
    assert.equal(b(s.coeService(uid)), `service:service-information/services/${uid}`);
    assert.equal(b(s.coeServices()), 'service:service-information');
    assert.equal(b(s.coeEndpoints(uid)), `service:endpoints-info/endpoints/${uid}`);
    assert.equal(b(s.coeEndpointsInfo()), 'service:endpoints-info');
    assert.equal(b(s.k8sNode(uid)), `k8s-node:k8s-nodes-info/k8s-nodes/${uid}`);
    assert.equal(b(s.k8sNodesInfo()), 'k8s-node:k8s-nodes-info');
  });

  it('spells the same entries as RFC 8040 list=key', () => {
    assert.equal(
      encodePath(s.adjacency('default:nginx-1', '10.11.1.5/32'), 'rfc8040'),
      'l3vpn:vpn-interfaces/vpn-interface=default:nginx-1/odl-l3vpn:adjacency=10.11.1.5%2F32',
    );
    assert.equal(
      encodePath(a.vpnInstance('default'), 'rfc8040'),
      'l3vpn-instances-interfaces:vpn-instances/vpn-instance=default',
    );
  });
});
