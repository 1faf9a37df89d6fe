/**
 * What the bridge's datapath needs of the pod interfaces on it: whether their TX checksum
 * offload must go.
 *
 * A veth with TX checksum offload on (the kernel's default) hands TCP and UDP packets to its
 * peer with the checksum only partly computed (CHECKSUM_PARTIAL): whoever finally transmits
 * the packet is to finish it. The kernel datapath passes the socket buffer on with that note,
 * and the receiving stack accepts it. The userspace datapath (`datapath_type=netdev`) reads a
 * veth through an AF_PACKET socket, which delivers the bytes without the note, and writes them
 * to the other pod's veth as they are: the receiver sees a wrong checksum and drops TCP
 * segments and UDP datagrams (ICMP and ARP, checksummed in full by the sender, pass).
 *
 * Open vSwitch's own system tests on the userspace datapath therefore run `ethtool -K <veth>
 * tx off` on the non-OVS end of every veth (CONFIGURE_VETH_OFFLOADS in
 * tests/system-userspace-macros.at, and the same for DPDK in tests/system-dpdk.at): "Packets
 * with offloaded partial checksum are received with the wrong checksum, therefore discarded
 * by the receiver". With `other_config:userspace-tso-enable=true` (read when ovs-vswitchd
 * starts) ovs-vswitchd opens those sockets with PACKET_VNET_HDR, so each frame carries a
 * virtio-net header with the partial checksum's position and the datapath completes or
 * forwards it (lib/netdev-linux.c); offload can then stay on. See docs/agent.md.
 *
 * So on a netdev bridge without userspace TSO the pod's end of the veth must have TX checksum
 * offload off (the agent turns it off during ADD, odlcoectl trace checks it; see
 * pod-interface.ts); that also turns off TSO, which depends on it. The host end and the
 * bridge's internal port need nothing: what OVS writes into them is complete already, and the
 * kernel gives a tap device no checksum offload unless its reader asks for it.
 */

/** What decides the policy: the bridge's datapath and whether userspace TSO is configured. */
export interface DatapathFacts {
  bridge: string;
  /** The Bridge's `datapath_type`; OVS's default (an empty column) is reported as `system`. */
  datapathType: string;
  /** `Open_vSwitch other_config:userspace-tso-enable` is `true`. */
  userspaceTso: boolean;
}

export interface PodOffloadPolicy {
  /** `turn-off`: each pod interface's TX checksum offload must be off; `leave`: untouched. */
  txChecksum: 'turn-off' | 'leave';
  /** Why, in a sentence an operator can act on. */
  why: string;
}

export function podOffloadPolicy(d: DatapathFacts): PodOffloadPolicy {
  if (d.datapathType !== 'netdev') {
    return {
      txChecksum: 'leave',
      why: `bridge ${d.bridge} uses the kernel datapath (datapath_type ${d.datapathType}), which completes partial checksums itself`,
    };
  }
  if (d.userspaceTso) {
    return {
      txChecksum: 'leave',
      why: `bridge ${d.bridge} uses the userspace datapath with other_config:userspace-tso-enable=true: ovs-vswitchd exchanges veth frames with virtio-net headers that carry partial checksums`,
    };
  }
  return {
    txChecksum: 'turn-off',
    why: `bridge ${d.bridge} uses the userspace datapath (datapath_type netdev) without other_config:userspace-tso-enable=true, which forwards veth frames with partial checksums unfinished`,
  };
}
