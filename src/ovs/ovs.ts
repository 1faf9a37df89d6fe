/**
 * The Open vSwitch adapter: the agent wires pods with it, odlcoectl trace and the sandbox read
 * the bridge through it. Pod ports (addPort, delPort, getPort, listPorts), the datapath and
 * ping go to ovsdb-server directly, over one persistent OVSDB JSON-RPC connection (RFC 7047, see
 * ovsdb/client.ts): they run on every CNI ADD and DEL, where an `ovs-vsctl` process per call
 * cost more than everything else together. Node set-up (bridge, controllers, managers,
 * local_ip) runs every minute at most and keeps `ovs-vsctl`, whose `--may-exist add-br` and
 * `set-manager` semantics it relies on.
 *
 * How a port is added, and why it is safe:
 * - One transaction inserts the Interface (with its external_ids as an OVSDB map: no quoting
 *   of `:` or anything else), the Port, and the reference from the Bridge, guarded by `wait`
 *   operations with timeout 0 that assert the bridge exists and no Port or Interface of that
 *   name does. It commits entirely or not at all.
 * - ovs-vswitchd reports the outcome in the Interface row, in the same transaction in which
 *   it would acknowledge `next_cfg` (which is what ovs-vsctl waits for): `ofport` > 0 when
 *   attached, -1 and `error` when it could not open the device. A second transaction waits
 *   (an OVSDB `wait` with the remaining timeout, evaluated by ovsdb-server on every commit)
 *   until `ofport` is set, and reads it and `error` back. So the ovs-vsctl trap (exit 0
 *   although the port failed) cannot happen, and no `next_cfg` round trip is needed.
 * - When ovs-vswitchd is down the insert still commits and the wait times out; on any failure
 *   after the insert might have committed, the row is removed again, but only if its
 *   external_ids are still the ones this call wrote.
 */
import { performance } from 'node:perf_hooks';
import ipaddr from 'ipaddr.js';
import type { Logger } from '../common/log.js';
import { errorMessage, silentLogger } from '../common/log.js';
import { run } from '../common/exec.js';
import type { DatapathFacts } from './datapath.js';
import { validateBridgeName, validatePortName } from './names.js';
import {
  OvsdbClient,
  OvsdbConnectionError,
  OvsdbTransactionError,
  type OvsdbOperation,
  type OvsdbOperationResult,
} from './ovsdb/client.js';
import {
  decodeMap,
  decodeOptional,
  decodeSet,
  decodeUuid,
  namedUuid,
  ovsMap,
  ovsSet,
  uuid,
} from './ovsdb/datum.js';

export interface OvsPort {
  name: string;
  /** OpenFlow port number; 0 while ovs-vswitchd has not attached it yet, -1 when it failed. */
  ofport: number;
  /** The Interface `error` column, when ovs-vswitchd reports one. */
  error?: string;
  /** The Interface `type`, when not the default (a device that exists, e.g. a veth): `internal`. */
  type?: string;
  externalIds: Record<string, string>;
}

/**
 * An OVS internal port (ovs-vswitchd makes the device: a tap on the userspace datapath), with
 * the MAC and MTU ovs-vswitchd gives the device whenever it (re)creates it.
 */
export interface InternalPortOptions {
  type: 'internal';
  mac: string;
  mtu: number;
}

export interface OvsOptions {
  /**
   * Unix socket of ovsdb-server, as a path or `unix:<path>` (see ovsdbSocketPath); undefined:
   * the system database (`$OVS_RUNDIR/db.sock`, as ovs-vsctl).
   */
  dbSocket?: string;
  /** Deadline of one operation, including how long addPort waits for ovs-vswitchd. Default 10. */
  timeoutSeconds?: number;
  logger?: Logger;
}

export interface BridgeOptions {
  /** Unset: left as it is (a new bridge gets OVS's default, the kernel datapath). */
  datapathType?: 'system' | 'netdev';
  /** Default ['OpenFlow13'] (what ODL's OpenFlow plugin speaks). */
  protocols?: string[];
  /** Unset: left as it is. */
  failMode?: 'secure' | 'standalone';
}

/** addPort's progress, for callers that time it: the insert committed, the port attached. */
export interface AddPortObserver {
  onStep?: (step: 'insert' | 'attach', ms: number) => void;
}

/** What delPort did: removed the port, found none on the bridge, or kept one that is not the caller's. */
export type DelPortOutcome = 'removed' | 'absent' | 'not-owned';

/** An OVS operation failed, or OVS refused what was asked. */
export class OvsError extends Error {
  override name = 'OvsError';
}

/** A port of that name already exists and belongs to a different attachment. */
export class OvsPortConflictError extends OvsError {
  override name = 'OvsPortConflictError';
  constructor(
    message: string,
    readonly existing: OvsPort,
  ) {
    super(message);
  }
}

const DATABASE = 'Open_vSwitch';
const PROTOCOL = /^OpenFlow1[0-5]$/;
const EXTERNAL_ID_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/;
const MAX_EXTERNAL_ID_LENGTH = 1024;
const DEFAULT_TIMEOUT_SECONDS = 10;
const INTERFACE_COLUMNS = ['_uuid', 'name', 'type', 'ofport', 'error', 'external_ids'];
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
/** A guarded transaction lost a race with another writer this many times: give up. */
const MAX_ATTEMPTS = 3;
/** Over the OVSDB-side timeout of a `wait`, so that ovsdb-server's answer comes first. */
const CLIENT_MARGIN_MS = 5_000;

/** The Interface row of a port name, its Port row, and the bridge holding that Port. */
interface Located {
  iface?: OvsPort & { uuid: string };
  portUuid?: string;
  /** The bridge whose `ports` holds the Port; undefined when none does. */
  bridge?: string;
}

/**
 * The path of ovsdb-server's unix socket, given as the path itself or in OVS's own notation
 * `unix:<path>` (what `ovs-vsctl --db` and ovs-vswitchd take). odlcoe drives the node's local
 * database only: every other OVSDB target (`tcp:`, `ssl:`, the passive `p…:` forms) is refused,
 * as is a relative path.
 */
export function ovsdbSocketPath(target: string): string {
  const path = target.startsWith('unix:') ? target.slice('unix:'.length) : target;
  if (path.startsWith('/')) return path;
  const scheme = /^([a-z]+):/.exec(target)?.[1];
  throw new OvsError(
    scheme && scheme !== 'unix'
      ? `OVSDB target ${JSON.stringify(target)} is not supported (${scheme}): odlcoe drives ovsdb-server ` +
          "through its local unix socket only; give the socket's absolute path, or unix:<absolute path>"
      : `OVSDB socket ${JSON.stringify(target)} must be an absolute path, or unix:<absolute path>`,
  );
}

export class Ovs {
  private readonly dbSocket: string | undefined;
  private readonly timeoutSeconds: number;
  private readonly logger: Logger;
  private readonly db: OvsdbClient;

  constructor(opts: OvsOptions = {}) {
    const dbSocket = opts.dbSocket === undefined ? undefined : ovsdbSocketPath(opts.dbSocket);
    const timeout = opts.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
    // 0 would mean "wait forever" to ovs-vsctl.
    if (!Number.isInteger(timeout) || timeout < 1) {
      throw new OvsError(`timeoutSeconds must be a positive integer, got ${timeout}`);
    }
    this.dbSocket = dbSocket;
    this.timeoutSeconds = timeout;
    this.logger = opts.logger ?? silentLogger();
    this.db = new OvsdbClient({
      // ovs-vsctl's default: <rundir>/db.sock, where OVS_RUNDIR overrides the build's rundir.
      socketPath: dbSocket ?? `${process.env.OVS_RUNDIR ?? '/var/run/openvswitch'}/db.sock`,
      requestTimeoutMs: timeout * 1000,
      logger: this.logger,
    });
  }

  /** Closes the OVSDB connection (an idle one never keeps the process alive anyway). */
  close(): void {
    this.db.close();
  }

  /** Throws when ovsdb-server cannot be reached (or does not serve the Open_vSwitch database). */
  async ping(): Promise<void> {
    await this.transact([{ op: 'select', table: 'Open_vSwitch', where: [], columns: ['_uuid'] }], {
      readOnly: true,
    });
  }

  /** Creates the bridge if missing and sets the requested properties; safe to repeat. */
  async ensureBridge(bridge: string, opts: BridgeOptions = {}): Promise<void> {
    validateBridgeName(bridge);
    const protocols = opts.protocols ?? ['OpenFlow13'];
    if (protocols.length === 0) throw new OvsError('protocols must name at least one OpenFlow version');
    for (const p of protocols) {
      if (!PROTOCOL.test(p))
        throw new OvsError(`unknown OpenFlow protocol ${JSON.stringify(p)} (OpenFlow10..OpenFlow15)`);
    }
    const settings = [`protocols=${protocols.join(',')}`];
    if (opts.datapathType) settings.push(`datapath_type=${opts.datapathType}`);
    if (opts.failMode) settings.push(`fail_mode=${opts.failMode}`);
    await this.vsctl(['--', '--may-exist', 'add-br', bridge, '--', 'set', 'Bridge', bridge, ...settings]);
    // The bridge's own interface fails like any port (e.g. no kernel module for `system`).
    const local = await this.getPort(bridge);
    if (local?.error) throw new OvsError(`bridge ${bridge} is not usable: ${local.error}`);
  }

  /** Replaces the OVSDB managers (e.g. ['tcp:10.0.0.1:6640']); [] removes them. */
  async setManager(targets: string[]): Promise<void> {
    targets.forEach(validateTarget);
    await this.vsctl(targets.length === 0 ? ['del-manager'] : ['set-manager', ...targets]);
  }

  /** Replaces the bridge's OpenFlow controllers; [] removes them. */
  async setController(bridge: string, targets: string[]): Promise<void> {
    validateBridgeName(bridge);
    targets.forEach(validateTarget);
    await this.vsctl(
      targets.length === 0 ? ['del-controller', bridge] : ['set-controller', bridge, ...targets],
    );
  }

  /** Open_vSwitch other_config:local_ip, the tunnel endpoint NetVirt reads for this node. */
  async setLocalIp(ip: string): Promise<void> {
    if (!ipaddr.isValid(ip)) throw new OvsError(`local_ip ${JSON.stringify(ip)} is not an IP address`);
    const normalised = ipaddr.parse(ip).toString();
    await this.vsctl(['set', 'Open_vSwitch', '.', `other_config:local_ip=${JSON.stringify(normalised)}`]);
  }

  /**
   * Adds `port` (an existing network device) to `bridge` with these Interface external_ids, in
   * one transaction, then waits until ovs-vswitchd attached it. On any failure the port row
   * is removed again (when it is still this call's) and the error thrown. A port of that name
   * that already exists on the bridge with exactly these external_ids is returned once
   * attached (a repeated ADD); with other external_ids, or on another bridge, it is someone
   * else's, and an OvsPortConflictError leaves it untouched. With `internal`, ovs-vswitchd
   * creates the device itself (an internal port).
   */
  async addPort(
    bridge: string,
    port: string,
    externalIds: Record<string, string>,
    observer: AddPortObserver = {},
    internal?: InternalPortOptions,
  ): Promise<OvsPort> {
    validateBridgeName(bridge);
    validatePortName(port);
    checkExternalIds(externalIds);
    if (internal) checkInternalPort(internal);
    const started = performance.now();
    const deadline = Date.now() + this.timeoutSeconds * 1000;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.db.transact(DATABASE, insertPortOps(bridge, port, externalIds, internal));
        break;
      } catch (err) {
        if (!(err instanceof OvsdbTransactionError)) {
          // A broken connection or a late answer: the insert may have committed.
          throw await this.rollback(bridge, port, externalIds, err);
        }
        // Nothing was committed. Index 0: no such bridge; 1, 2 (or a constraint violation
        // at commit, when another client inserted the name concurrently): the name is taken.
        if (err.index === 0) throw new OvsError(`cannot add port ${port}: bridge ${bridge} does not exist`);
        if (err.index !== 1 && err.index !== 2 && err.error !== 'constraint violation') {
          throw new OvsError(`adding OVS port ${port} to ${bridge} failed: ${err.message}`, { cause: err });
        }
        const existing = await this.locate(port);
        if (!existing.iface && existing.portUuid === undefined && attempt < MAX_ATTEMPTS) continue;
        if (
          existing.iface &&
          existing.bridge === bridge &&
          sameIds(existing.iface.externalIds, externalIds)
        ) {
          // A repeated ADD of the same attachment; not this call's row to remove on failure.
          return this.awaitAttached(bridge, port, deadline);
        }
        if (existing.iface) {
          throw new OvsPortConflictError(
            existing.bridge === bridge
              ? `OVS port ${port} already exists for another attachment (external_ids ${JSON.stringify(existing.iface.externalIds)})`
              : `OVS port ${port} already exists on ${existing.bridge ? `bridge ${existing.bridge}` : 'no bridge'}`,
            toPublic(existing.iface),
          );
        }
        throw new OvsError(
          `cannot add port ${port} to ${bridge}: a port of that name exists${existing.bridge ? ` on bridge ${existing.bridge}` : ''} without an interface of that name`,
        );
      }
    }
    const inserted = performance.now();
    observer.onStep?.('insert', inserted - started);
    try {
      const attached = await this.awaitAttached(bridge, port, deadline);
      observer.onStep?.('attach', performance.now() - inserted);
      return attached;
    } catch (err) {
      throw await this.rollback(bridge, port, externalIds, err);
    }
  }

  /**
   * Removes the port; succeeds when it does not exist (or is on another bridge: then it is
   * not this bridge's to remove). With `ifExternalIds`, removes it only when its Interface's
   * external_ids contain those pairs, checked in the same transaction as the removal, so a
   * DEL that knows only the port name cannot remove a port that (after a name collision)
   * belongs to another container. Resolves with what it did.
   */
  async delPort(
    bridge: string,
    port: string,
    opts: { ifExternalIds?: Record<string, string> } = {},
  ): Promise<DelPortOutcome> {
    validateBridgeName(bridge);
    validatePortName(port);
    if (opts.ifExternalIds) checkExternalIds(opts.ifExternalIds);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const found = await this.locate(port);
      if (opts.ifExternalIds) {
        if (!found.iface) return 'absent';
        const ids = found.iface.externalIds;
        if (Object.entries(opts.ifExternalIds).some(([k, v]) => ids[k] !== v)) {
          this.logger.warn('not deleting OVS port owned by another attachment', {
            port,
            expected: opts.ifExternalIds,
            actual: ids,
          });
          return 'not-owned';
        }
      }
      if (found.portUuid === undefined || found.bridge !== bridge) return 'absent';
      // Still that Port row, still on this bridge (and, below, still the caller's): otherwise
      // it changed since the look-up, and the look-up is repeated.
      const guards: OvsdbOperation[] = [
        assertRows('Port', [['_uuid', '==', uuid(found.portUuid)]], [{ name: port }]),
        assertRows(
          'Bridge',
          [
            ['name', '==', bridge],
            ['ports', 'includes', ovsSet([uuid(found.portUuid)])],
          ],
          [{ name: bridge }],
        ),
      ];
      if (opts.ifExternalIds) {
        guards.push(
          assertRows(
            'Interface',
            [
              ['name', '==', port],
              ['external_ids', 'includes', ovsMap(opts.ifExternalIds)],
            ],
            [{ name: port }],
          ),
        );
      }
      try {
        // No wait for ovs-vswitchd: removing a row must not hang on a dead switch daemon,
        // which drops the port when it comes back.
        await this.db.transact(DATABASE, [
          ...guards,
          {
            op: 'mutate',
            table: 'Bridge',
            where: [['name', '==', bridge]],
            mutations: [['ports', 'delete', ovsSet([uuid(found.portUuid)])]],
          },
          { op: 'comment', comment: `odlcoe-agent: del-port ${bridge} ${port}` },
        ]);
        return 'removed';
      } catch (err) {
        if (err instanceof OvsdbTransactionError && err.index < guards.length) continue;
        throw wrap(`removing OVS port ${port} from ${bridge}`, err);
      }
    }
    throw new OvsError(`removing OVS port ${port}: it changed under ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * The bridge's ports (not its own internal port), in one read transaction. With
   * `withExternalIds`, only those whose external_ids contain these pairs (filtered by
   * ovsdb-server, so an ADD does not read every port of a busy node).
   */
  async listPorts(
    bridge: string,
    opts: { withExternalIds?: Record<string, string> } = {},
  ): Promise<OvsPort[]> {
    validateBridgeName(bridge);
    if (opts.withExternalIds) checkExternalIds(opts.withExternalIds);
    const [bridges, ports, interfaces] = await this.transact(
      [
        { op: 'select', table: 'Bridge', where: [['name', '==', bridge]], columns: ['ports'] },
        { op: 'select', table: 'Port', where: [], columns: ['_uuid', 'interfaces'] },
        {
          op: 'select',
          table: 'Interface',
          where: opts.withExternalIds ? [['external_ids', 'includes', ovsMap(opts.withExternalIds)]] : [],
          columns: INTERFACE_COLUMNS,
        },
      ],
      { readOnly: true },
    );
    const bridgeRow = rowsOf(bridges)[0];
    if (!bridgeRow) throw new OvsError(`bridge ${bridge} not found`);
    const portUuids = new Set(decodeSet(bridgeRow.ports).map(decodeUuid));
    const ifaceUuids = new Set(
      rowsOf(ports)
        .filter((p) => portUuids.has(decodeUuid(p._uuid)))
        .flatMap((p) => decodeSet(p.interfaces).map(decodeUuid)),
    );
    return rowsOf(interfaces)
      .filter((i) => ifaceUuids.has(decodeUuid(i._uuid)))
      .map((row) => toPublic(toOvsPort(row)))
      .filter((p) => p.name !== bridge)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The Interface of that name, wherever it is attached. */
  async getPort(port: string): Promise<OvsPort | undefined> {
    validatePortName(port);
    const [result] = await this.transact(
      [{ op: 'select', table: 'Interface', where: [['name', '==', port]], columns: INTERFACE_COLUMNS }],
      { readOnly: true },
    );
    const row = rowsOf(result)[0];
    return row ? toPublic(toOvsPort(row)) : undefined;
  }

  /**
   * What decides the pod interfaces' offload on `bridge` (see datapath.ts): its `datapath_type`
   * and `Open_vSwitch other_config:userspace-tso-enable`, in one read.
   */
  async datapath(bridge: string): Promise<DatapathFacts> {
    validateBridgeName(bridge);
    const [bridges, root] = await this.transact(
      [
        { op: 'select', table: 'Bridge', where: [['name', '==', bridge]], columns: ['datapath_type'] },
        { op: 'select', table: 'Open_vSwitch', where: [], columns: ['other_config'] },
      ],
      { readOnly: true },
    );
    const bridgeRow = rowsOf(bridges)[0];
    if (!bridgeRow) throw new OvsError(`bridge ${bridge} not found`);
    const type = decodeOptional(bridgeRow.datapath_type);
    const otherConfig = decodeMap(rowsOf(root)[0]?.other_config ?? ovsMap({}));
    return {
      bridge,
      datapathType: typeof type === 'string' && type !== '' ? type : 'system',
      userspaceTso: otherConfig['userspace-tso-enable'] === 'true',
    };
  }

  /**
   * Waits (inside ovsdb-server, no polling) until ovs-vswitchd has written the Interface's
   * `ofport`, then judges it: > 0 attached, otherwise (-1, `error`) failed.
   */
  private async awaitAttached(bridge: string, port: string, deadline: number): Promise<OvsPort> {
    let seen: unknown = ovsSet([]);
    for (;;) {
      const remaining = Math.max(0, deadline - Date.now());
      let results: OvsdbOperationResult[];
      try {
        results = await this.db.transact(
          DATABASE,
          [
            {
              op: 'wait',
              timeout: remaining,
              table: 'Interface',
              where: [['name', '==', port]],
              columns: ['ofport'],
              until: '!=',
              rows: [{ ofport: seen }],
            },
            { op: 'select', table: 'Interface', where: [['name', '==', port]], columns: INTERFACE_COLUMNS },
          ],
          { timeoutMs: remaining + CLIENT_MARGIN_MS },
        );
      } catch (err) {
        if (err instanceof OvsdbTransactionError && err.index === 0 && err.error === 'timed out') {
          throw new OvsError(
            `adding OVS port ${port} to ${bridge} failed: ovs-vswitchd gave it no OpenFlow port number within ${this.timeoutSeconds}s (is it running?)`,
          );
        }
        throw wrap(`waiting for OVS port ${port}`, err);
      }
      const row = rowsOf(results[1])[0];
      if (!row) throw new OvsError(`OVS port ${port} vanished while waiting for it to attach to ${bridge}`);
      const current = toOvsPort(row);
      if (current.error || current.ofport < 0) {
        throw new OvsError(
          `OVS could not attach ${port} to ${bridge}: ${current.error ?? `ofport ${current.ofport}`}`,
        );
      }
      if (current.ofport > 0) return toPublic(current);
      // ofport 0: not a number ovs-vswitchd assigns; wait for the next change.
      seen = row.ofport;
    }
  }

  /** Port row, Interface row and holding bridge of a port name, in one read. */
  private async locate(port: string): Promise<Located> {
    const [ifaces, ports, bridges] = await this.transact(
      [
        { op: 'select', table: 'Interface', where: [['name', '==', port]], columns: INTERFACE_COLUMNS },
        { op: 'select', table: 'Port', where: [['name', '==', port]], columns: ['_uuid'] },
        { op: 'select', table: 'Bridge', where: [], columns: ['name', 'ports'] },
      ],
      { readOnly: true },
    );
    const ifaceRow = rowsOf(ifaces)[0];
    const portRow = rowsOf(ports)[0];
    const out: Located = {};
    if (ifaceRow) out.iface = toOvsPort(ifaceRow);
    if (portRow) {
      const portUuid = decodeUuid(portRow._uuid);
      out.portUuid = portUuid;
      const holder = rowsOf(bridges).find((b) => decodeSet(b.ports).some((p) => decodeUuid(p) === portUuid));
      if (holder && typeof holder.name === 'string') out.bridge = holder.name;
    }
    return out;
  }

  /** Removes a port this call may have committed; returns the error to throw. */
  private async rollback(
    bridge: string,
    port: string,
    externalIds: Record<string, string>,
    cause: unknown,
  ): Promise<Error> {
    const error =
      cause instanceof OvsError
        ? cause
        : new OvsError(`adding OVS port ${port} to ${bridge} failed: ${errorMessage(cause)}`, { cause });
    try {
      // Only when every pair is still the one this call wrote: otherwise not ours.
      await this.delPort(bridge, port, { ifExternalIds: externalIds });
    } catch (cleanupErr) {
      this.logger.error('could not remove OVS port after a failed add', {
        port,
        bridge,
        error: errorMessage(cleanupErr),
      });
      error.message += `; removing the port again also failed: ${errorMessage(cleanupErr)}`;
    }
    return error;
  }

  private async transact(
    ops: OvsdbOperation[],
    opts: { readOnly?: boolean } = {},
  ): Promise<OvsdbOperationResult[]> {
    try {
      return await this.db.transact(DATABASE, ops, opts);
    } catch (err) {
      throw wrap('OVSDB', err);
    }
  }

  private async vsctl(args: string[]): Promise<string> {
    const full = [
      ...(this.dbSocket ? [`--db=unix:${this.dbSocket}`] : []),
      `--timeout=${this.timeoutSeconds}`,
      ...args,
    ];
    this.logger.debug('ovs-vsctl', { args: full });
    // ovs-vsctl's own --timeout fires first (SIGALRM); ours is the backstop.
    const { stdout } = await run('ovs-vsctl', full, { timeoutMs: (this.timeoutSeconds + 5) * 1000 });
    return stdout;
  }
}

/**
 * The insert of one port (see the file comment): operations 0..2 are the preconditions whose
 * failure addPort interprets by index.
 */
function insertPortOps(
  bridge: string,
  port: string,
  externalIds: Record<string, string>,
  internal: InternalPortOptions | undefined,
): OvsdbOperation[] {
  return [
    assertRows('Bridge', [['name', '==', bridge]], [{ name: bridge }]),
    assertRows('Port', [['name', '==', port]], []),
    assertRows('Interface', [['name', '==', port]], []),
    {
      op: 'insert',
      table: 'Interface',
      row: {
        name: port,
        external_ids: ovsMap(externalIds),
        ...(internal ? { type: internal.type, mac: internal.mac, mtu_request: internal.mtu } : {}),
      },
      'uuid-name': 'iface',
    },
    { op: 'insert', table: 'Port', row: { name: port, interfaces: namedUuid('iface') }, 'uuid-name': 'port' },
    {
      op: 'mutate',
      table: 'Bridge',
      where: [['name', '==', bridge]],
      mutations: [['ports', 'insert', ovsSet([namedUuid('port')])]],
    },
    { op: 'comment', comment: `odlcoe-agent: add-port ${bridge} ${port}` },
  ];
}

/**
 * A precondition: the rows matching `where`, projected on the columns of `rows`, are exactly
 * `rows` now (a `wait` with timeout 0 fails the transaction at once otherwise).
 */
function assertRows(table: string, where: unknown[], rows: Record<string, unknown>[]): OvsdbOperation {
  return { op: 'wait', timeout: 0, table, where, columns: ['name'], until: '==', rows };
}

function wrap(what: string, err: unknown): Error {
  if (err instanceof OvsError) return err;
  if (err instanceof OvsdbConnectionError) return new OvsError(`${what}: ${err.message}`, { cause: err });
  return new OvsError(`${what}: ${errorMessage(err)}`, { cause: err });
}

function checkExternalIds(externalIds: Record<string, string>): void {
  for (const [k, v] of Object.entries(externalIds)) {
    if (!EXTERNAL_ID_KEY.test(k) || k.length > 128)
      throw new OvsError(`invalid external_ids key ${JSON.stringify(k)}`);
    if (typeof v !== 'string' || v.includes('\u0000') || v.length > MAX_EXTERNAL_ID_LENGTH) {
      throw new OvsError(`invalid external_ids value for ${k}: ${JSON.stringify(v)}`);
    }
  }
}

function checkInternalPort(p: InternalPortOptions): void {
  if (p.type !== 'internal') throw new OvsError(`unsupported port type ${JSON.stringify(p.type)}`);
  if (!MAC.test(p.mac)) throw new OvsError(`invalid MAC ${JSON.stringify(p.mac)}`);
  if (!Number.isInteger(p.mtu) || p.mtu < 68 || p.mtu > 65535)
    throw new OvsError(`invalid MTU ${JSON.stringify(p.mtu)}`);
}

function sameIds(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

function validateTarget(target: string): void {
  const active = /^(tcp|ssl):(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(target);
  const passive = /^(ptcp|pssl):(\d{1,5})(:(\[[0-9A-Fa-f:.]+\]|[0-9.]+))?$/.exec(target);
  const unix = /^p?unix:\/\S*$/.test(target) && !target.includes('\u0000');
  const port = Number(active?.[3] ?? passive?.[2] ?? 1);
  if (!(active || passive || unix) || port < 1 || port > 65535) {
    throw new OvsError(`invalid OVS connection target ${JSON.stringify(target)} (e.g. tcp:10.0.0.1:6640)`);
  }
}

function rowsOf(result: OvsdbOperationResult | undefined): Record<string, unknown>[] {
  if (!result || !Array.isArray(result.rows)) throw new OvsError('OVSDB select returned no rows array');
  return result.rows;
}

function toOvsPort(row: Record<string, unknown>): OvsPort & { uuid: string } {
  if (typeof row.name !== 'string')
    throw new OvsError(`Interface row without a name: ${JSON.stringify(row)}`);
  const ofport = decodeOptional(row.ofport);
  const error = decodeOptional(row.error);
  return {
    uuid: decodeUuid(row._uuid),
    name: row.name,
    ofport: typeof ofport === 'number' ? ofport : 0,
    ...(typeof error === 'string' && error !== '' ? { error } : {}),
    ...(typeof row.type === 'string' && row.type !== '' ? { type: row.type } : {}),
    externalIds: decodeMap(row.external_ids),
  };
}

/** The OvsPort callers see (without the row uuid, which is an OVSDB detail). */
function toPublic(p: OvsPort & { uuid?: string }): OvsPort {
  return {
    name: p.name,
    ofport: p.ofport,
    ...(p.error !== undefined ? { error: p.error } : {}),
    ...(p.type !== undefined ? { type: p.type } : {}),
    externalIds: p.externalIds,
  };
}
