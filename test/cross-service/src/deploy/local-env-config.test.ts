// deploy/local/icepack.env configures the local stack's services (services.sh gives every
// service the whole file): a variable that no service reads promises a setting that does
// nothing.
import { configSchema as dispatcherConfig } from '@icepack/dispatcher/config';
import { configSchema as scannerConfig } from '@icepack/metadata-scanner/config';
import { configSchema as plannerConfig } from '@icepack/planner/config';
import { configSchema as provisionerConfig } from '@icepack/provisioner/config';
import { localEnvNames } from '@icepack/test/deploy';
import { describe, expect, it } from 'vitest';

const SCHEMAS = [provisionerConfig, scannerConfig, plannerConfig, dispatcherConfig];

describe('deploy/local/icepack.env', () => {
  it('sets only variables a service reads', () => {
    const unread = localEnvNames().filter(
      (name) => !SCHEMAS.some((schema) => name in schema.shape),
    );
    expect(unread).toEqual([]);
  });
});
