import { ValidationError } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { notInBootstrap, parseBootstrap } from './bootstrap-file.ts';

function issues(text: string): string[] {
  try {
    parseBootstrap(text, 'icepack.yaml');
  } catch (error) {
    if (error instanceof ValidationError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('parseBootstrap', () => {
  it('reads catalogs and groups with their defaults applied', () => {
    const bootstrap = parseBootstrap(`
catalogs:
  - {name: sales, type: rest, uri: "http://catalog:8181"}
groups:
  - {name: sales, catalog: sales, cpu: "8", memory: 32Gi, slots: 2}
`);
    expect(bootstrap.catalogs).toEqual([
      {
        name: 'sales',
        type: 'rest',
        uri: 'http://catalog:8181',
        auth: { type: 'none' },
        properties: {},
      },
    ]);
    expect(bootstrap.groups[0]?.spark).toMatchObject({
      driverCores: 1,
      executorMemory: '4g',
      maxExecutors: 4,
    });
  });

  it('accepts an empty file', () => {
    expect(parseBootstrap('')).toEqual({ catalogs: [], groups: [] });
  });

  it('names the bad entry and field', () => {
    expect(
      issues('groups:\n  - {name: Bad_Name, catalog: c, cpu: "1", memory: 1Gi, slots: 1}\n')[0],
    ).toMatch(/^groups\[0\]\.name: must be a DNS-1123 label/);
    expect(
      issues(
        'catalogs:\n  - {name: c, type: rest, uri: "http://x", properties: {token: abc}}\n',
      )[0],
    ).toMatch(/^catalogs\[0\]\.properties\.token: looks like a secret/);
    expect(issues('groupz: []\n')[0]).toMatch(/groupz/);
  });

  it('refuses two groups for one catalog and text that is not YAML', () => {
    expect(
      issues(
        'groups:\n  - {name: a, catalog: c, cpu: "4", memory: 8Gi, slots: 1}\n  - {name: b, catalog: c, cpu: "4", memory: 8Gi, slots: 1}\n',
      ),
    ).toEqual([
      'groups[1].catalog: catalog "c" already has group groups[0]: one group per catalog',
    ]);
    expect(issues('catalogs: [\n')[0]).toMatch(/^: not valid YAML/);
  });

  it('names what exists but is not in the file, and nothing that is', () => {
    const bootstrap = parseBootstrap(`
catalogs:
  - {name: sales, type: rest, uri: "http://catalog:8181"}
groups:
  - {name: sales-group, catalog: sales, cpu: "8", memory: 32Gi, slots: 2}
`);
    expect(
      notInBootstrap(bootstrap, {
        catalogs: ['sales', 'web', 'ads'],
        groups: ['web-group', 'sales-group'],
      }),
    ).toEqual({ catalogs: ['ads', 'web'], groups: ['web-group'] });
    expect(notInBootstrap(bootstrap, { catalogs: ['sales'], groups: ['sales-group'] })).toEqual({
      catalogs: [],
      groups: [],
    });
  });
});
