import kafkajs from 'kafkajs';
import type { AclEntry } from 'kafkajs';
import type { KafkaClient } from './kafka-client.ts';
import type { AclRule } from './service-acls.ts';

// kafkajs is CommonJS and Node cannot see these enums as named exports.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;

function entry(rule: AclRule): AclEntry {
  return {
    principal: rule.principal,
    host: '*',
    resourceType: AclResourceTypes[rule.resourceType],
    resourceName: rule.name,
    resourcePatternType: ResourcePatternTypes[rule.patternType],
    operation: AclOperationTypes[rule.operation],
    permissionType: AclPermissionTypes.ALLOW,
  };
}

/** Creates the rules (idempotent: an existing rule is kept). Needs an admin principal. */
export async function applyAcls(client: KafkaClient, rules: readonly AclRule[]): Promise<void> {
  const admin = client.kafka.admin();
  await admin.connect();
  try {
    await admin.createAcls({ acl: rules.map(entry) });
  } finally {
    await admin.disconnect();
  }
}

/** Removes exactly these rules (tests clean up with it). */
export async function removeAcls(client: KafkaClient, rules: readonly AclRule[]): Promise<void> {
  if (rules.length === 0) return;
  const admin = client.kafka.admin();
  await admin.connect();
  try {
    await admin.deleteAcls({ filters: rules.map(entry) });
  } finally {
    await admin.disconnect();
  }
}
