import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@icepack/test';
import { describe, expect, it } from 'vitest';
import { loadBootstrap } from './bootstrap-source.ts';

const dir = tempDir('icepack-scanner-bootstrap-');
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('loadBootstrap', () => {
  it('reads a YAML file: catalogs, and bindings as names or binding objects', async () => {
    const path = file(
      'scanner.yaml',
      [
        'catalogs:',
        '  - name: sales',
        '    type: rest',
        '    uri: http://iceberg-rest:8181',
        '    auth: {type: bearer, token: {env: SALES_TOKEN}}',
        'bindings:',
        '  - sales',
        '  - {catalog: sales, group: sales-group}',
      ].join('\n'),
    );
    const bootstrap = await loadBootstrap(path);
    expect(bootstrap.catalogs.map((c) => [c.name, c.uri])).toEqual([
      ['sales', 'http://iceberg-rest:8181'],
    ]);
    expect(bootstrap.bindings).toEqual(['sales']);
  });

  it('reads the JSON document given inline', async () => {
    const bootstrap = await loadBootstrap(
      '{"catalogs": [{"name": "web", "type": "rest", "uri": "http://c:8181"}], "bindings": ["web"]}',
    );
    expect(bootstrap.bindings).toEqual(['web']);
  });

  it('names the file and the field of a bad entry, and a file that is missing or not YAML', async () => {
    await expect(
      loadBootstrap(file('bad.yaml', 'catalogs:\n  - {name: Sales!, type: rest, uri: x}\n')),
    ).rejects.toThrow(/invalid bootstrap .*bad\.yaml: catalogs\[0\]\.(name|uri)/);
    await expect(loadBootstrap(join(dir, 'missing.yaml'))).rejects.toThrow(
      /cannot read bootstrap file .*missing\.yaml/,
    );
    await expect(loadBootstrap(file('broken.yaml', 'catalogs: [unclosed\n'))).rejects.toThrow(
      /invalid bootstrap .*broken\.yaml/,
    );
  });
});
