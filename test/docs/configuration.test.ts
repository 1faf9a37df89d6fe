/**
 * docs/configuration.md's settings tables are what the programs' declarations say: a setting
 * added, removed or changed in the code without `npm run docs:config` fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONFIGURATION_MD, renderConfigurationDocs } from '../../scripts/config-docs.js';

describe('docs/configuration.md', () => {
  it('has the settings tables the declarations generate (npm run docs:config)', () => {
    const text = readFileSync(CONFIGURATION_MD, 'utf8');
    assert.equal(text, renderConfigurationDocs(text));
  });
});
