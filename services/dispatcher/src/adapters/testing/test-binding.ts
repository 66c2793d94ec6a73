import { SPARK_DEFAULTS, type Binding } from '@icepack/types';

/** A ready local-runner binding for `catalog`. */
export function testBinding(catalog: string, overrides: Partial<Binding> = {}): Binding {
  return {
    catalog,
    group: catalog,
    namespace: `icepack-${catalog}`,
    slots: 2,
    smallSlots: 1,
    cpu: '4',
    memory: '16Gi',
    spark: { ...SPARK_DEFAULTS, sparkConf: {} },
    state: 'ready',
    runner: 'local',
    updatedAt: new Date().toISOString(),
    ...overrides,
  };
}
