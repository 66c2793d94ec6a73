import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { laneOf, laneOrder, laneRank } from './lanes.ts';

/**
 * Vitest's own order (failed first, then longest first from the last run's timings, else
 * largest file first), with the integration files arranged by `laneOrder` so that the
 * shared-lane files run beside the first paired one, the paired ones longest first as listed,
 * and the Kubernetes files last (`lanes.ts`).
 */
export class LaneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const integration = sorted.filter((f) => f.project.name === 'integration');
    if (integration.length === 0) return sorted;
    const root = this.ctx.config.root;
    const path = (f: TestSpecification): string => relative(root, f.moduleId);
    const ordered = laneOrder(
      integration,
      (f) => laneOf(path(f)),
      (f) => laneRank(path(f)),
    );
    // The integration files take the places they had, in the lanes' order.
    return sorted.map((f) => (f.project.name === 'integration' ? ordered.shift()! : f));
  }
}
