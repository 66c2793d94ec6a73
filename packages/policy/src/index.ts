// @icepack/policy: the one home of the maintenance policy — keys, defaults, parsers and the
// precedence table property > namespace setting > catalog setting > default (docs/planner.md).
export { IcebergKeys, PolicyDefaults, PolicyKeys, type PolicyKey } from './policy-keys.ts';
export {
  durationAtLeast,
  integerAtLeast,
  parseBoolean,
  parseColumnList,
  parseByteSize,
  parseDuration,
  parseHilbertColumns,
  parseMergeStrategy,
  parseShare,
  parseSortColumns,
  type MergeStrategy,
  type Parsed,
  type PropertyParser,
  type SortColumn,
} from './property-parsers.ts';
export {
  catalogPolicyIssues,
  formatProblem,
  measuredUnderOtherPolicy,
  policyLayers,
  PolicySource,
  resolvePolicy,
  settingsProblems,
  type CatalogPolicy,
  type PausedBy,
  type Policy,
  type PolicyLayers,
  type PolicyFieldIssue,
  type PolicyProblem,
  type PolicySettings,
  type ResolvedPolicy,
} from './policy.ts';
