// What reading one table state costs the planner before it plans: `parseMessage` of a
// `TableScanned` version 2 message listing 100 partitions (the replica benchmark's input, issue
// 17 point 6) — decoding, unpacking the packed partition list, the exact check. Two checkouts'
// `packages/types` alternate in one process, rounds of `count` parses each, so both see the
// same machine and load; each round is timed on the process's CPU clock.
// Run: node bench/planner/parse-message.ts <old checkout root> [rounds] [count]
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { tableKey } from '@icepack/types';
import { machine } from '../iceberg/machine.ts';
import { partitionStates } from './partition-states.ts';

const oldRoot = resolve(process.argv[2] ?? '/work/main');
const newRoot = resolve(import.meta.dirname, '..', '..');
const rounds = Number(process.argv[3] ?? 20);
const count = Number(process.argv[4] ?? 2_000);
for (const [name, n] of Object.entries({ rounds, count }))
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number ≥ 1`);

interface Messages {
  createEnvelope: (
    t: string,
    k: string,
    p: unknown,
    o: { version: number; id: string; occurredAt: Date },
  ) => unknown;
  serializeEnvelope: (e: unknown) => Uint8Array | string;
  parseMessage: (bytes: Uint8Array, expected: readonly string[]) => unknown;
}

async function load(root: string): Promise<Messages> {
  return (await import(resolve(root, 'packages/types/src/messages.ts'))) as Messages;
}

const [state] = partitionStates('bench', 1, 20, 1, 1_000);
const codes = [
  { label: `old (${oldRoot})`, m: await load(oldRoot) },
  { label: `new (${newRoot})`, m: await load(newRoot) },
];
// Each code's own message of the state; the same bytes (one id and time), or the codes' wire
// formats differ and the comparison would not be like for like.
const envelope = {
  version: 2,
  id: '00000000-0000-4000-8000-000000000000',
  occurredAt: new Date(Date.UTC(2026, 0, 1)),
};
const inputs = codes.map(({ m }) =>
  Buffer.from(
    m.serializeEnvelope(m.createEnvelope('TableScanned', tableKey(state!.table), state, envelope)),
  ),
);
if (!inputs[0]!.equals(inputs[1]!)) throw new Error('the two codes write different messages');

const perParse: number[][] = codes.map(() => []);
for (let r = -2; r < rounds; r++) {
  // Two unmeasured rounds first: V8 compiles each code's path.
  for (const [i, { m }] of codes.entries()) {
    const start = process.cpuUsage();
    for (let k = 0; k < count; k++) m.parseMessage(inputs[i]!, ['TableScanned']);
    const used = process.cpuUsage(start);
    if (r >= 0) perParse[i]!.push((used.user + used.system) / count);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratios = perParse[1]!.map((n, r) => n / perParse[0]![r]!);
console.log(`# parseMessage of a TableScanned v2 state, 100 partitions listed (${inputs[0]!.length} bytes)

${rounds} alternating rounds of ${count} parses; µs of process CPU per parse; load (1 min) at the end: ${loadavg()[0]!.toFixed(1)}

| code | median µs | min | max |
|---|---|---|---|
${codes.map(({ label }, i) => `| ${label} | ${median(perParse[i]!).toFixed(1)} | ${Math.min(...perParse[i]!).toFixed(1)} | ${Math.max(...perParse[i]!).toFixed(1)} |`).join('\n')}

new/old per round: median ${median(ratios).toFixed(3)}, new ahead in ${ratios.filter((x) => x < 1).length} of ${rounds}

## Machine

\`\`\`
${machine()}
\`\`\``);
