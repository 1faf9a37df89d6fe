import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import type { Profile } from '../netvirt/profile.js';
import { decodeValue, encodeValue, parseJsonText } from './codec.js';
import type { Child } from './data.js';
import type { Datastore } from './datastore.js';
import type { SchemaRoot } from './schema.js';

/**
 * The config datastore on disk, so it survives restarts (as ODL's does). The file holds the
 * RFC 8040 JSON of every top-level container; it is read back through the same validating
 * decoder as client writes, so a hand-edited or truncated file is refused at start-up with the
 * reason instead of half-loading. Saving is debounced (at most once per `SAVE_DELAY_MS` while
 * writes keep coming) and atomic (temporary file, then rename); `close` flushes.
 */
const FORMAT = 'odlcoe-emulator-state/1';
const SAVE_DELAY_MS = 1000;

export class StateFileError extends Error {
  override name = 'StateFileError';
}

/** Loads `path` into `store`; a missing file is an empty datastore. */
export function loadStateFile(path: string, schema: SchemaRoot, profile: Profile, store: Datastore): void {
  if (!existsSync(path)) return;
  const fail = (why: string): never => {
    throw new StateFileError(`state file ${path} is corrupt: ${why}`);
  };
  let doc: unknown;
  try {
    doc = parseJsonText(readFileSync(path, 'utf8'));
  } catch (err) {
    fail(errorMessage(err));
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return fail('not a JSON object');
  const { format, profile: savedProfile, config } = doc as Record<string, unknown>;
  if (format !== FORMAT) fail(`format is ${JSON.stringify(format)}, expected "${FORMAT}"`);
  if (savedProfile !== profile) {
    throw new StateFileError(
      `state file ${path} was written for profile ${String(savedProfile)}, not ${profile}: use that profile or another file`,
    );
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    return fail('"config" is not a JSON object');
  for (const [member, raw] of Object.entries(config)) {
    const node = schema.children.byQName.get(member);
    if (!node || !node.config) fail(`"${member}" is not a top-level config node of profile ${profile}`);
    try {
      store.put([{ node: node! }], decodeValue(node!, raw, ''));
    } catch (err) {
      fail(`${member}: ${errorMessage(err)}`);
    }
  }
}

export class StateFile {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;
  private dirty = false;

  constructor(
    private readonly path: string,
    private readonly schema: SchemaRoot,
    private readonly profile: Profile,
    private readonly store: Datastore,
    private readonly logger: Logger,
  ) {}

  /** Notes a change; the file is written within `SAVE_DELAY_MS`. */
  markDirty(): void {
    this.dirty = true;
    if (!this.timer && !this.saving) this.timer = setTimeout(() => void this.save(), SAVE_DELAY_MS);
  }

  /** Writes pending changes now and waits for the write. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.saving) await this.saving;
    if (this.dirty) await this.save();
  }

  /** Drops a pending save (start-up failed: the file keeps what it had). */
  discard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty = false;
  }

  private serialize(): string {
    const parts: string[] = [];
    for (const [qname, value] of this.store.root) {
      const node = this.schema.children.byQName.get(qname);
      if (node) parts.push(`${JSON.stringify(qname)}:${encodeValue(node, value as Child, 'rfc8040')}`);
    }
    return `{"format":"${FORMAT}","profile":"${this.profile}","config":{${parts.join(',')}}}\n`;
  }

  private async save(): Promise<void> {
    this.timer = undefined;
    this.dirty = false;
    const text = this.serialize();
    const tmp = `${this.path}.tmp-${process.pid}`;
    this.saving = (async () => {
      try {
        await writeFile(tmp, text, { mode: 0o600 });
        await rename(tmp, this.path);
      } catch (err) {
        this.dirty = true;
        this.logger.error('cannot write state file', { path: this.path, error: errorMessage(err) });
      }
    })();
    await this.saving;
    this.saving = undefined;
    if (this.dirty && !this.timer) this.timer = setTimeout(() => void this.save(), SAVE_DELAY_MS);
  }
}
