import { Topics } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { aclCommands, localKafkaUsers, serviceAcls } from './service-acls.ts';

const writers = (rules: ReturnType<typeof serviceAcls>, topic: string) =>
  rules
    .filter((r) => r.resourceType === 'TOPIC' && r.name === topic && r.operation === 'WRITE')
    .map((r) => r.principal)
    .sort();

describe('serviceAcls', () => {
  const rules = serviceAcls({ users: localKafkaUsers() });

  it('lets only the owner of each topic write it', () => {
    expect(writers(rules, Topics.catalogs)).toEqual(['User:icepack-provisioner']);
    expect(writers(rules, Topics.bindings)).toEqual(['User:icepack-provisioner']);
    expect(writers(rules, Topics.tableState)).toEqual(['User:icepack-metadata-scanner']);
    expect(writers(rules, Topics.taskEvents)).toEqual([
      'User:icepack-dispatcher',
      'User:icepack-planner',
    ]);
    expect(writers(rules, Topics.commits)).toEqual(['User:icepack-commit-source']);
    expect(writers(rules, Topics.scanRequests)).toEqual([
      'User:icepack-dispatcher',
      'User:icepack-metadata-scanner',
    ]);
  });

  it('lets each service read every topic it consumes', () => {
    const readers = (topic: string) =>
      rules
        .filter((r) => r.resourceType === 'TOPIC' && r.name === topic && r.operation === 'READ')
        .map((r) => r.principal)
        .sort();
    // The planner reads each catalog's policy from its definition (services/planner/src/main.ts).
    expect(readers(Topics.catalogs)).toEqual([
      'User:icepack-dispatcher',
      'User:icepack-metadata-scanner',
      'User:icepack-planner',
    ]);
    expect(readers(Topics.tableState)).toEqual(['User:icepack-planner']);
    expect(readers(Topics.taskEvents)).toEqual(['User:icepack-planner']);
  });

  it('grants only ALLOW rules on literal topics and on each consumer role’s group prefix', () => {
    expect(rules.filter((r) => r.resourceType === 'GROUP')).toEqual([
      expect.objectContaining({
        principal: 'User:icepack-metadata-scanner',
        name: 'icepack-metadata-scanner',
        patternType: 'PREFIXED',
        operation: 'READ',
      }),
      expect.objectContaining({ principal: 'User:icepack-metadata-scanner', operation: 'DELETE' }),
      expect.objectContaining({
        principal: 'User:icepack-planner',
        name: 'icepack-planner',
        operation: 'READ',
      }),
      expect.objectContaining({ principal: 'User:icepack-planner', operation: 'DELETE' }),
      expect.objectContaining({
        principal: 'User:icepack-dispatcher',
        name: 'icepack-dispatcher',
        operation: 'READ',
      }),
      expect.objectContaining({ principal: 'User:icepack-dispatcher', operation: 'DELETE' }),
    ]);
    expect(
      rules.filter((r) => r.resourceType === 'TOPIC').every((r) => r.patternType === 'LITERAL'),
    ).toBe(true);
  });

  it('follows renamed topics and covers only the roles given', () => {
    const renamed = serviceAcls({
      users: { planner: 'p' },
      topics: {
        tableState: 't1.state',
        taskEvents: 't1.events',
        dlq: 't1.dlq',
        catalogs: 't1.catalogs',
      },
      groupPrefixes: { planner: 't1-planner' },
    });
    expect(new Set(renamed.map((r) => r.principal))).toEqual(new Set(['User:p']));
    expect(new Set(renamed.map((r) => r.name))).toEqual(
      new Set(['t1.state', 't1.events', 't1.dlq', 't1.catalogs', 't1-planner']),
    );
  });

  it('prints one kafka-acls.sh command per principal and resource', () => {
    const commands = aclCommands(serviceAcls({ users: { provisioner: 'prov' } }));
    expect(commands[0]).toBe(
      `kafka-acls.sh --bootstrap-server "$KAFKA_BOOTSTRAP" --command-config admin.properties --add --allow-principal 'User:prov' --operation WRITE --operation CREATE --operation DESCRIBE --topic 'icepack.catalogs' --resource-pattern-type literal`,
    );
    expect(commands).toHaveLength(Object.keys(Topics).length);
  });
});
