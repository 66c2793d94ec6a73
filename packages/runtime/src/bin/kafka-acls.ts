// Prints or applies Icepack's Kafka ACLs (the one home of them: ../kafka/service-acls.ts).
//   node packages/runtime/src/bin/kafka-acls.ts print [role=user …]
//       → kafka-acls.sh commands for an operator to run with admin credentials
//   node packages/runtime/src/bin/kafka-acls.ts apply --bootstrap host:port [role=user …]
//       → creates them through the Admin API (plaintext, an admin/super-user listener)
// Roles: provisioner, metadata-scanner, planner, dispatcher, commit-source. Without role=user
// pairs every role gets the user `icepack-<role>` (what deploy/local/kafka.sh creates).
import pino from 'pino';
import {
  aclCommands,
  applyAcls,
  KafkaClient,
  KafkaPrincipalRole,
  localKafkaUsers,
  serviceAcls,
} from '../index.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

const [mode, ...rest] = process.argv.slice(2);
let bootstrap: string | undefined;
const users: Partial<Record<KafkaPrincipalRole, string>> = {};
for (let i = 0; i < rest.length; i++) {
  const arg = rest[i] as string;
  if (arg === '--bootstrap') {
    bootstrap = rest[++i];
    continue;
  }
  const [role = '', user = ''] = arg.split('=');
  if (!isRole(role) || user === '') {
    err(
      `unknown argument "${arg}" (expected role=user, role one of ${Object.values(KafkaPrincipalRole).join(', ')})`,
    );
    process.exit(2);
  }
  users[role] = user;
}
const rules = serviceAcls({ users: Object.keys(users).length > 0 ? users : localKafkaUsers() });

if (mode === 'print') {
  for (const line of aclCommands(rules)) out(line);
} else if (mode === 'apply' && bootstrap !== undefined) {
  const logger = pino({ level: 'warn' });
  await applyAcls(
    new KafkaClient({ brokers: [bootstrap], clientId: 'icepack-acls', logger }),
    rules,
  );
  out(`applied ${String(rules.length)} ACL rules`);
} else {
  err('usage: kafka-acls.ts print|apply --bootstrap host:port [role=user …]');
  process.exit(2);
}

function isRole(text: string): text is KafkaPrincipalRole {
  return (Object.values(KafkaPrincipalRole) as string[]).includes(text);
}
