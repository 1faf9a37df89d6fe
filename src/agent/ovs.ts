import ipaddr from 'ipaddr.js';
import type { Logger } from '../common/log.js';
import { errorMessage, silentLogger } from '../common/log.js';
import { CommandError, run } from './exec.js';
import { validateBridgeName, validatePortName } from './names.js';

/**
 * Open vSwitch through `ovs-vsctl` (reads with `--format=json`), against the system OVSDB or
 * a given unix socket (tests run a private one).
 *
 * Two properties of ovs-vsctl shape this module:
 * - It exits 0 even when ovs-vswitchd could not open a port; the failure is only visible in
 *   the Interface's `ofport` (-1) and `error` columns, so addPort reads them back.
 * - When ovs-vswitchd is down, a write waits up to `--timeout` for it, then fails, but the
 *   transaction is already committed in OVSDB. A failed addPort therefore removes its row.
 */

export interface OvsPort {
  name: string;
  /** OpenFlow port number; 0 while ovs-vswitchd has not attached it yet, -1 when it failed. */
  ofport: number;
  /** The Interface `error` column, when ovs-vswitchd reports one. */
  error?: string;
  externalIds: Record<string, string>;
}

export interface OvsOptions {
  /** Unix socket of ovsdb-server; undefined uses ovs-vsctl's default (the system database). */
  dbSocket?: string;
  /** ovs-vsctl `--timeout`; also how long a write waits for ovs-vswitchd. Default 10. */
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

/** An ovs-vsctl command failed, or OVS refused what was asked. */
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

const PROTOCOL = /^OpenFlow1[0-5]$/;
const EXTERNAL_ID_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/;
const MAX_EXTERNAL_ID_LENGTH = 1024;
const DEFAULT_TIMEOUT_SECONDS = 10;
const INTERFACE_COLUMNS = 'name,ofport,error,external_ids';

export class Ovs {
  private readonly dbSocket: string | undefined;
  private readonly timeoutSeconds: number;
  private readonly logger: Logger;

  constructor(opts: OvsOptions = {}) {
    if (opts.dbSocket !== undefined && !opts.dbSocket.startsWith('/')) {
      throw new OvsError(`OVSDB socket must be an absolute path, got ${JSON.stringify(opts.dbSocket)}`);
    }
    const timeout = opts.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
    // 0 would mean "wait forever" to ovs-vsctl.
    if (!Number.isInteger(timeout) || timeout < 1) {
      throw new OvsError(`timeoutSeconds must be a positive integer, got ${timeout}`);
    }
    this.dbSocket = opts.dbSocket;
    this.timeoutSeconds = timeout;
    this.logger = opts.logger ?? silentLogger();
  }

  /** Throws when ovsdb-server cannot be reached (or answers nonsense). */
  async ping(): Promise<void> {
    await this.vsctl(['--no-wait', 'list-br']);
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
    await this.vsctl(['set', 'Open_vSwitch', '.', `other_config:local_ip=${quote(normalised)}`]);
  }

  /**
   * Adds `port` (an existing network device) to `bridge` with these Interface external_ids, in
   * one transaction, then checks that ovs-vswitchd attached it. On any failure the port row
   * is removed again and the error thrown. A port of that name that already exists with
   * exactly these external_ids is returned as is (a repeated ADD); with other external_ids it
   * is someone else's, and an OvsPortConflictError leaves it untouched.
   */
  async addPort(bridge: string, port: string, externalIds: Record<string, string>): Promise<OvsPort> {
    validateBridgeName(bridge);
    validatePortName(port);
    const ids = externalIdSettings(externalIds);
    try {
      await this.vsctl([
        '--',
        'add-port',
        bridge,
        port,
        ...(ids.length > 0 ? ['--', 'set', 'Interface', port, ...ids] : []),
      ]);
    } catch (err) {
      if (err instanceof CommandError && /already exists/.test(err.stderr)) {
        // "cannot create a port named P because a port named P already exists on bridge B"
        const onBridge = /already exists on bridge (\S+)/.exec(err.stderr)?.[1] ?? bridge;
        const existing = await this.getPort(port);
        if (existing && onBridge === bridge && sameIds(existing.externalIds, externalIds)) {
          return this.awaitAttached(bridge, port, existing);
        }
        if (existing) {
          throw new OvsPortConflictError(
            onBridge === bridge
              ? `OVS port ${port} already exists for another attachment (external_ids ${JSON.stringify(existing.externalIds)})`
              : `OVS port ${port} already exists on bridge ${onBridge}`,
            existing,
          );
        }
      }
      // The row may be committed even though ovs-vsctl failed (ovs-vswitchd down: it timed
      // out waiting for it). Remove it, but only if it is ours.
      throw await this.rollback(bridge, port, externalIds, err);
    }
    try {
      const current = await this.getPort(port);
      if (!current) throw new OvsError(`OVS port ${port} vanished right after it was added`);
      return await this.awaitAttached(bridge, port, current);
    } catch (err) {
      throw await this.rollback(bridge, port, externalIds, err);
    }
  }

  /**
   * Removes the port; succeeds when it does not exist. With `ifExternalIds`, removes it only
   * when its external_ids contain those pairs, so a DEL that knows only the port name cannot
   * remove a port that (after a name collision) belongs to another container.
   */
  async delPort(
    bridge: string,
    port: string,
    opts: { ifExternalIds?: Record<string, string> } = {},
  ): Promise<void> {
    validateBridgeName(bridge);
    validatePortName(port);
    if (opts.ifExternalIds) {
      const existing = await this.getPort(port);
      if (!existing) return;
      for (const [k, v] of Object.entries(opts.ifExternalIds)) {
        if (existing.externalIds[k] !== v) {
          this.logger.warn('not deleting OVS port owned by another attachment', {
            port,
            expected: opts.ifExternalIds,
            actual: existing.externalIds,
          });
          return;
        }
      }
    }
    // --no-wait: deleting a row must not hang on a dead ovs-vswitchd; it drops the port
    // when it comes back.
    try {
      await this.vsctl(['--no-wait', '--if-exists', 'del-port', bridge, port]);
    } catch (err) {
      // --if-exists covers a missing port, not one on another bridge: not ours to remove,
      // and absent from this bridge, which is what was asked.
      if (err instanceof CommandError && /does not have a port/.test(err.stderr)) return;
      throw err;
    }
  }

  /** The bridge's ports (not its own internal port), in one ovs-vsctl call. */
  async listPorts(bridge: string): Promise<OvsPort[]> {
    validateBridgeName(bridge);
    const out = await this.vsctl([
      '--format=json',
      '--',
      '--columns=ports',
      'list',
      'Bridge',
      bridge,
      '--',
      '--columns=_uuid,interfaces',
      'list',
      'Port',
      '--',
      `--columns=_uuid,${INTERFACE_COLUMNS}`,
      'list',
      'Interface',
    ]);
    const [bridges, ports, interfaces] = out
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => parseTable(line));
    if (!bridges || !ports || !interfaces)
      throw new OvsError(`unexpected ovs-vsctl output listing ports of ${bridge}`);
    const bridgeRow = bridges[0];
    if (!bridgeRow) throw new OvsError(`bridge ${bridge} not found`);
    const portUuids = new Set(decodeSet(bridgeRow.ports).map(decodeUuid));
    const ifaceUuids = new Set(
      ports
        .filter((p) => portUuids.has(decodeUuid(p._uuid)))
        .flatMap((p) => decodeSet(p.interfaces).map(decodeUuid)),
    );
    return interfaces
      .filter((i) => ifaceUuids.has(decodeUuid(i._uuid)))
      .map(toOvsPort)
      .filter((p) => p.name !== bridge)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The Interface of that name, wherever it is attached. */
  async getPort(port: string): Promise<OvsPort | undefined> {
    validatePortName(port);
    const out = await this.vsctl([
      '--format=json',
      `--columns=${INTERFACE_COLUMNS}`,
      'find',
      'Interface',
      `name=${quote(port)}`,
    ]);
    const row = parseTable(out)[0];
    return row ? toOvsPort(row) : undefined;
  }

  /**
   * ovs-vsctl returns once ovs-vswitchd has applied the configuration, which normally
   * includes ofport; poll briefly in case the status update lands a moment later.
   */
  private async awaitAttached(bridge: string, port: string, first: OvsPort): Promise<OvsPort> {
    const deadline = Date.now() + this.timeoutSeconds * 1000;
    let current: OvsPort | undefined = first;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      if (!current)
        throw new OvsError(`OVS port ${port} vanished while waiting for it to attach to ${bridge}`);
      if (current.error || current.ofport < 0) {
        throw new OvsError(
          `OVS could not attach ${port} to ${bridge}: ${current.error ?? `ofport ${current.ofport}`}`,
        );
      }
      if (current.ofport > 0) return current;
      if (Date.now() >= deadline) {
        throw new OvsError(`OVS port ${port} got no OpenFlow port number within ${this.timeoutSeconds}s`);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      current = await this.getPort(port);
    }
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

/** ovs-vsctl's value syntax: a double-quoted string takes JSON-style escapes; unquoted `:` or `,` would not parse. */
function quote(value: string): string {
  return JSON.stringify(value);
}

function externalIdSettings(externalIds: Record<string, string>): string[] {
  const entries = Object.entries(externalIds);
  for (const [k, v] of entries) {
    if (!EXTERNAL_ID_KEY.test(k) || k.length > 128)
      throw new OvsError(`invalid external_ids key ${JSON.stringify(k)}`);
    if (typeof v !== 'string' || v.includes('\u0000') || v.length > MAX_EXTERNAL_ID_LENGTH) {
      throw new OvsError(`invalid external_ids value for ${k}: ${JSON.stringify(v)}`);
    }
  }
  return entries.map(([k, v]) => `external_ids:${quote(k)}=${quote(v)}`);
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

// ---- ovs-vsctl --format=json decoding ------------------------------------------------------

type Row = Record<string, unknown>;

/** One `--format=json` table: {"headings": [...], "data": [[...], ...]} into rows keyed by column. */
function parseTable(text: string): Row[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new OvsError(`ovs-vsctl printed invalid JSON: ${errorMessage(err)}`);
  }
  const table = parsed as { headings?: unknown; data?: unknown };
  if (!Array.isArray(table.headings) || !Array.isArray(table.data)) {
    throw new OvsError('ovs-vsctl JSON output lacks headings/data');
  }
  const headings = table.headings as string[];
  return (table.data as unknown[][]).map((cells) =>
    Object.fromEntries(headings.map((h, i) => [h, cells[i]])),
  );
}

/** OVSDB JSON: a set of one element is written as the bare element. */
function decodeSet(value: unknown): unknown[] {
  if (Array.isArray(value) && value[0] === 'set' && Array.isArray(value[1])) return value[1] as unknown[];
  return value === undefined ? [] : [value];
}

function decodeUuid(value: unknown): string {
  if (Array.isArray(value) && value[0] === 'uuid' && typeof value[1] === 'string') return value[1];
  throw new OvsError(`expected an OVSDB uuid, got ${JSON.stringify(value)}`);
}

function decodeMap(value: unknown): Record<string, string> {
  if (!Array.isArray(value) || value[0] !== 'map' || !Array.isArray(value[1])) {
    throw new OvsError(`expected an OVSDB map, got ${JSON.stringify(value)}`);
  }
  const out: Record<string, string> = {};
  for (const pair of value[1] as unknown[]) {
    if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string')
      out[pair[0]] = pair[1];
  }
  return out;
}

function toOvsPort(row: Row): OvsPort {
  if (typeof row.name !== 'string')
    throw new OvsError(`Interface row without a name: ${JSON.stringify(row)}`);
  const ofport = decodeSet(row.ofport)[0];
  const error = decodeSet(row.error)[0];
  return {
    name: row.name,
    ofport: typeof ofport === 'number' ? ofport : 0,
    ...(typeof error === 'string' && error !== '' ? { error } : {}),
    externalIds: decodeMap(row.external_ids),
  };
}
