import { describe, expect, it } from 'vitest';
import { DEFAULTS, OptionError, parseOptions } from './options.ts';

describe('parseOptions', () => {
  it('reads minutes, policies and seed, defaulting the rest', () => {
    expect(parseOptions(['--minutes', '30', '--policy', 'icepack', '--seed', '7'], '/out')).toEqual(
      {
        ...DEFAULTS,
        minutes: 30,
        policies: ['icepack'],
        seed: 7,
        outDir: '/out',
      },
    );
    expect(
      parseOptions(['--minutes', '5', '--policy', 'none,cron,icepack'], '/o').policies,
    ).toEqual(['none', 'cron', 'icepack']);
  });

  it('reads where the lake lives: local by default, or s3', () => {
    expect(parseOptions(['--minutes', '3', '--policy', 'none'], '/o').storage).toBe('local');
    expect(
      parseOptions(['--minutes', '3', '--policy', 'none', '--storage', 's3'], '/o').storage,
    ).toBe('s3');
  });

  it('reads the resident-session idle bound: 0 (the dispatcher’s default) unless given', () => {
    expect(parseOptions(['--minutes', '3', '--policy', 'icepack'], '/o').residentIdleSeconds).toBe(
      0,
    );
    expect(
      parseOptions(['--minutes', '3', '--policy', 'icepack', '--resident-idle-seconds', '60'], '/o')
        .residentIdleSeconds,
    ).toBe(60);
  });

  it.each([
    [['--policy', 'icepack'], '--minutes: required'],
    [['--minutes', '3'], '--policy: required'],
    [['--minutes', 'x', '--policy', 'none'], '--minutes: expected a number > 0, got "x"'],
    [['--minutes', '3', '--policy', 'nightly'], '--policy: expected none|cron|icepack'],
    [['--minutes', '3', '--policy', 'none', '--seed', '1.5'], '--seed: expected a whole number'],
    [['--minutes', '3', '--policy', 'none', '--load', '-1'], '--load: expected a number > 0'],
    [['--minutes', '3', '--policy', 'none', '--max-per-kind', '0'], '--max-per-kind: expected'],
    [
      ['--minutes', '3', '--policy', 'none', '--max-per-kind', '1.5'],
      '--max-per-kind: expected a whole number',
    ],
    [['--minutes', '3', '--policy', 'none', '--storage', 'gcs'], '--storage: expected local|s3'],
    [['--minutes', '3', '--policy', 'none', '--storage'], '--storage: expected local|s3, got null'],
    [
      ['--minutes', '3', '--policy', 'icepack', '--resident-idle-seconds', '-5'],
      '--resident-idle-seconds: expected a whole number ≥ 0, got "-5"',
    ],
    [
      ['--minutes', '3', '--policy', 'icepack', '--resident-idle-seconds', '1.5'],
      '--resident-idle-seconds: expected a whole number ≥ 0',
    ],
    [['--minutes', '3', '--policy', 'none', '--fast'], 'unknown flag "--fast"'],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => parseOptions(argv, '/o')).toThrow(OptionError);
    expect(() => parseOptions(argv, '/o')).toThrow(message);
  });
});
