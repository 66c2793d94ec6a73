import { describe, expect, it } from 'vitest';
import {
  InvalidQuantityError,
  isQuantity,
  parseCpuMillicores,
  parseMemoryBytes,
  parseSparkMemoryBytes,
} from './quantity.ts';

describe('parseCpuMillicores', () => {
  it.each([
    ['8', 8000],
    ['500m', 500],
    ['0.5', 500],
    ['.1', 100],
    ['1.5', 1500],
    ['100u', 1], // rounds up, like Kubernetes
    ['1k', 1_000_000],
    ['2e3', 2_000_000],
    ['0', 0],
  ])('%s → %d', (text, millicores) => {
    expect(parseCpuMillicores(text)).toBe(millicores);
  });
});

describe('parseMemoryBytes', () => {
  it.each([
    ['32Gi', 32 * 2 ** 30],
    ['512Mi', 512 * 2 ** 20],
    ['1G', 1e9],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['128974848', 128974848],
    ['129e6', 129e6],
    ['1Ki', 1024],
    ['1500m', 2], // 1.5 bytes, rounded up
  ])('%s → %d', (text, bytes) => {
    expect(parseMemoryBytes(text)).toBe(bytes);
  });
});

describe('invalid quantities', () => {
  it.each(['', '8 ', 'Gi', '1gi', '1GB', '-1', '1.2.3', '1e999', 'abc', '10Ei0'])('%j', (text) => {
    const negative = text === '-1';
    if (!negative) expect(isQuantity(text)).toBe(text === '1e999');
    expect(() => parseMemoryBytes(text)).toThrow(InvalidQuantityError);
  });
});

describe('parseSparkMemoryBytes', () => {
  it.each([
    ['4g', 4 * 2 ** 30],
    ['512m', 512 * 2 ** 20],
    ['512M', 512 * 2 ** 20],
    ['1024', 1024 * 2 ** 20],
    ['2gb', 2 * 2 ** 30],
  ])('%s → %d', (text, bytes) => {
    expect(parseSparkMemoryBytes(text)).toBe(bytes);
  });

  it.each(['4Gi', '1.5g', '', 'g'])('rejects %j', (text) => {
    expect(() => parseSparkMemoryBytes(text)).toThrow(InvalidQuantityError);
  });
});
