import type { ResourceGroup } from '@icepack/types';
import { parseCpuMillicores, parseMemoryBytes } from '@icepack/types';
import { CapacityError } from './errors.ts';
import { formatCpu, formatMemory } from './quantities.ts';

/** cpu in millicores, memory in bytes. */
export interface Amount {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
}

export interface Reservation extends Amount {
  /** The group (or namespace) holding it, for messages. */
  readonly holder: string;
}

export const ZERO: Amount = { cpuMillis: 0, memoryBytes: 0 };

export function amountOf(resources: { cpu: string; memory: string }): Amount {
  return {
    cpuMillis: parseCpuMillicores(resources.cpu),
    memoryBytes: parseMemoryBytes(resources.memory),
  };
}

export function sum(amounts: readonly Amount[]): Amount {
  return amounts.reduce(
    (total, a) => ({
      cpuMillis: total.cpuMillis + a.cpuMillis,
      memoryBytes: total.memoryBytes + a.memoryBytes,
    }),
    ZERO,
  );
}

const show = (amount: Amount) => ({
  cpu: formatCpu(amount.cpuMillis),
  memory: formatMemory(amount.memoryBytes),
});

/**
 * Throws a {@link CapacityError} when `group` does not fit in `allocatable` minus what the
 * other groups reserve. `where` names the capacity ("the cluster", "this machine").
 */
export function checkCapacity(
  group: Pick<ResourceGroup, 'name' | 'cpu' | 'memory'>,
  allocatable: Amount,
  reservations: readonly Reservation[],
  where: string,
): void {
  const others = reservations.filter((r) => r.holder !== group.name);
  const reserved = sum(others);
  const free = {
    cpuMillis: Math.max(0, allocatable.cpuMillis - reserved.cpuMillis),
    memoryBytes: Math.max(0, allocatable.memoryBytes - reserved.memoryBytes),
  };
  const requested = amountOf(group);
  const short: string[] = [];
  if (requested.cpuMillis > free.cpuMillis) {
    short.push(
      `cpu ${formatCpu(requested.cpuMillis)} requested but only ${formatCpu(free.cpuMillis)} free`,
    );
  }
  if (requested.memoryBytes > free.memoryBytes) {
    short.push(
      `memory ${formatMemory(requested.memoryBytes)} requested but only ${formatMemory(free.memoryBytes)} free`,
    );
  }
  if (short.length === 0) return;
  throw new CapacityError(
    `resource group "${group.name}" does not fit ${where}: ${short.join('; ')} ` +
      `(allocatable cpu ${formatCpu(allocatable.cpuMillis)}, memory ${formatMemory(allocatable.memoryBytes)}; ` +
      `reserved by ${others.length} other Icepack group${others.length === 1 ? '' : 's'}: cpu ${formatCpu(reserved.cpuMillis)}, memory ${formatMemory(reserved.memoryBytes)})`,
    {
      requested: show(requested),
      allocatable: show(allocatable),
      reserved: show(reserved),
      free: show(free),
    },
  );
}
