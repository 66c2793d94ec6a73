import { describe, expect, it } from 'vitest';
import { DEFAULTS, OptionError, parseOptions, smallTablesOf } from './options.ts';

describe('parseOptions', () => {
  it('defaults to the issue’s 200 small and 5 large tables, every mode', () => {
    const o = parseOptions([], '/out');
    expect(o).toEqual({ ...DEFAULTS, outDir: '/out' });
    expect([o.small, o.large, o.modes, o.sizings]).toEqual([
      200,
      5,
      ['batched', 'single'],
      ['learned', 'fixed'],
    ]);
  });

  it('reads every option', () => {
    const o = parseOptions(
      [
        ...['--small', '6', '--large', '1', '--mode', 'single', '--sizing', 'fixed,learned'],
        ...['--single-small', '4', '--large-mb', '50', '--large-files', '520'],
        ...['--settle-minutes', '10', '--label', 'smoke', '--out', '/tmp/x'],
      ],
      '/out',
    );
    expect(o).toEqual({
      small: 6,
      large: 1,
      modes: ['single'],
      sizings: ['fixed', 'learned'],
      singleSmall: 4,
      largeMb: 50,
      largeFiles: 520,
      settleMinutes: 10,
      label: 'smoke',
      outDir: '/tmp/x',
    });
  });

  it.each([
    [['--small', '0'], /--small: expected an integer ≥ 1, got 0/],
    [['--large', '1.5'], /--large: /],
    [['--mode', 'batched,twice'], /--mode: expected a comma-separated list of batched, single/],
    [['--sizing'], /--sizing: .*got undefined/],
    [['--label', 'A B'], /--label: /],
    [['--speed', '3'], /unknown option --speed/],
  ])('refuses %j naming the option', (argv, message) => {
    expect(() => parseOptions(argv, '/out')).toThrow(OptionError);
    expect(() => parseOptions(argv, '/out')).toThrow(message);
  });
});

describe('smallTablesOf', () => {
  it('gives the batched mode every small table and the single mode its sample', () => {
    const o = parseOptions(['--small', '200', '--single-small', '20'], '/out');
    expect(smallTablesOf(o, 'batched')).toBe(200);
    expect(smallTablesOf(o, 'single')).toBe(20);
    expect(smallTablesOf({ ...o, small: 6 }, 'single')).toBe(6);
  });
});
