// BullMQ ships its compiled scripts' types with its ESM build only; the planner loads the
// CommonJS one (see queue-scripts.ts). Same shape as `dist/esm/scripts/addPrioritizedJob-9.d.ts`.
declare module 'bullmq/dist/cjs/scripts/addPrioritizedJob-9.js' {
  export const addPrioritizedJob: {
    readonly name: string;
    readonly content: string;
    readonly keys: number;
  };
}
