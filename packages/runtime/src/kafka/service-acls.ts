import { Topics } from '@icepack/types';

/**
 * The one home of who may do what on Kafka (docs/security.md#kafka-principals-and-acls).
 * The local stack (`deploy/local/kafka.sh acls`), the operators' generator
 * (`packages/runtime/src/bin/kafka-acls.ts`) and the SASL integration suite all apply
 * this list; nothing else writes ACLs.
 */
export const KafkaPrincipalRole = {
  provisioner: 'provisioner',
  scanner: 'metadata-scanner',
  planner: 'planner',
  dispatcher: 'dispatcher',
  /** Whatever publishes `CommitObserved` (a catalog event bridge); writes only that topic. */
  commitSource: 'commit-source',
} as const;
export type KafkaPrincipalRole = (typeof KafkaPrincipalRole)[keyof typeof KafkaPrincipalRole];

type TopicKey = keyof typeof Topics;

interface RoleGrants {
  /** Topics the role produces to (WRITE; and CREATE, DESCRIBE to ensure they exist). */
  readonly write: readonly TopicKey[];
  /** Topics the role consumes (READ). */
  readonly read: readonly TopicKey[];
  /** Consumer groups: READ and DELETE on the groups starting with the role's group prefix. */
  readonly groups: boolean;
}

/** Per role: the topics written and read. The provisioner creates every topic at start. */
export const ROLE_GRANTS: Readonly<Record<KafkaPrincipalRole, RoleGrants>> = {
  provisioner: { write: ['catalogs', 'bindings'], read: [], groups: false },
  'metadata-scanner': {
    write: ['scanRequests', 'tableState', 'dlq'],
    read: ['commits', 'scanRequests', 'catalogs', 'bindings'],
    groups: true,
  },
  // catalogs: each catalog's maintenance policy, from its definition (ADR 0018).
  planner: {
    write: ['taskEvents', 'dlq'],
    read: ['tableState', 'taskEvents', 'catalogs'],
    groups: true,
  },
  dispatcher: {
    write: ['taskEvents', 'scanRequests', 'dlq'],
    read: ['catalogs', 'bindings'],
    groups: true,
  },
  'commit-source': { write: ['commits'], read: [], groups: false },
};

/** Default consumer-group prefixes, as the services' configs default them. */
export const DEFAULT_GROUP_PREFIXES: Readonly<Record<KafkaPrincipalRole, string>> = {
  provisioner: 'icepack-provisioner',
  'metadata-scanner': 'icepack-metadata-scanner',
  planner: 'icepack-planner',
  dispatcher: 'icepack-dispatcher',
  'commit-source': 'icepack-commit-source',
};

export type AclOperation = 'READ' | 'WRITE' | 'CREATE' | 'DESCRIBE' | 'DELETE';

/** One ALLOW rule, in the terms of Kafka's `kafka-acls` tool. */
export interface AclRule {
  /** `User:<name>` */
  readonly principal: string;
  readonly resourceType: 'TOPIC' | 'GROUP';
  readonly patternType: 'LITERAL' | 'PREFIXED';
  readonly name: string;
  readonly operation: AclOperation;
}

export interface ServiceAclOptions {
  /** SASL user name per role (the principal is `User:<name>`); roles left out get no rules. */
  readonly users: Partial<Readonly<Record<KafkaPrincipalRole, string>>>;
  /** Topic names, when a deployment renames them; default {@link Topics}. */
  readonly topics?: Partial<Readonly<Record<TopicKey, string>>>;
  /** Consumer-group prefixes; default {@link DEFAULT_GROUP_PREFIXES}. */
  readonly groupPrefixes?: Partial<Readonly<Record<KafkaPrincipalRole, string>>>;
}

/**
 * The ALLOW rules for the given users: each role writes only its own topics and reads only
 * those it consumes. Everything else is denied by the broker (no `allow.everyone`), so a
 * principal that is not the owner of a topic cannot forge its messages.
 */
export function serviceAcls(options: ServiceAclOptions): AclRule[] {
  const rules: AclRule[] = [];
  const topic = (key: TopicKey) => options.topics?.[key] ?? Topics[key];
  for (const role of Object.values(KafkaPrincipalRole)) {
    const user = options.users[role];
    if (user === undefined) continue;
    const principal = `User:${user}`;
    const grants = ROLE_GRANTS[role];
    const add = (
      resourceType: AclRule['resourceType'],
      patternType: AclRule['patternType'],
      name: string,
      operations: readonly AclOperation[],
    ) => {
      for (const operation of operations) {
        rules.push({ principal, resourceType, patternType, name, operation });
      }
    };
    const written = new Set(grants.write);
    // The provisioner owns the topic layout: it creates every topic (ensureTopics at start).
    const created = role === 'provisioner' ? (Object.keys(Topics) as TopicKey[]) : grants.write;
    for (const key of new Set<TopicKey>([...grants.write, ...grants.read, ...created])) {
      const ops: AclOperation[] = [];
      if (written.has(key)) ops.push('WRITE');
      if (grants.read.includes(key)) ops.push('READ');
      if (created.includes(key)) ops.push('CREATE', 'DESCRIBE');
      add('TOPIC', 'LITERAL', topic(key), ops);
    }
    if (grants.groups) {
      const prefix = options.groupPrefixes?.[role] ?? DEFAULT_GROUP_PREFIXES[role];
      add('GROUP', 'PREFIXED', prefix, ['READ', 'DELETE']);
    }
  }
  return rules;
}

/**
 * The rules as `kafka-acls.sh` invocations (one per principal, resource and pattern), for
 * operators who apply them with their own admin credentials.
 */
export function aclCommands(
  rules: readonly AclRule[],
  commandConfig = 'admin.properties',
): string[] {
  const byTarget = new Map<string, AclRule[]>();
  for (const rule of rules) {
    const key = `${rule.principal}\u0000${rule.resourceType}\u0000${rule.patternType}\u0000${rule.name}`;
    byTarget.set(key, [...(byTarget.get(key) ?? []), rule]);
  }
  return [...byTarget.values()].map((group) => {
    const [first] = group as [AclRule, ...AclRule[]];
    const resource = first.resourceType === 'TOPIC' ? '--topic' : '--group';
    const ops = group.map((rule) => `--operation ${rule.operation}`).join(' ');
    return [
      'kafka-acls.sh --bootstrap-server "$KAFKA_BOOTSTRAP"',
      `--command-config ${commandConfig} --add`,
      `--allow-principal '${first.principal}'`,
      ops,
      `${resource} '${first.name}'`,
      `--resource-pattern-type ${first.patternType.toLowerCase()}`,
    ].join(' ');
  });
}

/** The SCRAM user per role on the local stack (`deploy/local/kafka.sh` creates them). */
export function localKafkaUsers(): Record<KafkaPrincipalRole, string> {
  const users = {} as Record<KafkaPrincipalRole, string>;
  for (const role of Object.values(KafkaPrincipalRole)) users[role] = `icepack-${role}`;
  return users;
}
