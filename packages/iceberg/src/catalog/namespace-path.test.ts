import { describe, expect, it } from 'vitest';
import {
  encodeNamespace,
  namespaceParam,
  prefixPath,
  separatorFromConfig,
} from './namespace-path.ts';

describe('namespace paths', () => {
  it('percent-encodes each part and joins them with the encoded separator', () => {
    expect(encodeNamespace(['a', 'b c', 'd/e'])).toBe('a%1Fb%20c%1Fd%2Fe');
    expect(encodeNamespace(['a', 'b'], '.')).toBe('a.b');
    expect(encodeNamespace(['a', 'b'], '|')).toBe('a%7Cb');
    expect(namespaceParam(['a', 'b'])).toBe('a\u001fb');
  });

  it('reads the config separator URL-encoded, and falls back to the unit separator', () => {
    expect(separatorFromConfig('%1F')).toBe('\u001f');
    expect(separatorFromConfig('%2E')).toBe('.');
    expect(separatorFromConfig('.')).toBe('.');
    expect(separatorFromConfig('%')).toBe('%');
    expect(separatorFromConfig(undefined)).toBe('\u001f');
    expect(separatorFromConfig('')).toBe('\u001f');
  });

  it('keeps the escapes of a config prefix and encodes what the server left raw', () => {
    // Nessie sends `{ref}|{warehouse}` encoded; encoding it again named a branch `main%7C…`.
    expect(prefixPath('main%7Cwarehouse')).toBe('main%7Cwarehouse');
    expect(prefixPath('main|warehouse')).toBe('main%7Cwarehouse');
    expect(prefixPath('catalogs/wh 1')).toBe('catalogs/wh%201');
    expect(prefixPath('a?b#c')).toBe('a%3Fb%23c');
    expect(prefixPath('bad%zz')).toBe('bad%25zz');
  });
});
