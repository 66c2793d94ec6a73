import { describe, expect, it } from 'vitest';
import { encodeNamespace, namespaceParam, separatorFromConfig } from './namespace-path.ts';

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
});
