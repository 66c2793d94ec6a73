import type { StatusCause } from './api-status.ts';
import type { ResourceType } from './resource-types.ts';

// The messages mirror k8s.io/apimachinery/pkg/util/validation so clients see familiar text.
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

function invalidValue(field: string, value: unknown, why: string): StatusCause {
  return {
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${JSON.stringify(value)}: ${why}`,
    field,
  };
}

export function nameProblems(type: ResourceType, name: string): StatusCause[] {
  if (type.nameIsLabel) {
    if (name.length > 63 || !LABEL.test(name)) {
      return [
        invalidValue(
          'metadata.name',
          name,
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
      ];
    }
    return [];
  }
  if (name.length > 253 || !SUBDOMAIN.test(name)) {
    return [
      invalidValue(
        'metadata.name',
        name,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ),
    ];
  }
  return [];
}

export function labelProblems(labels: unknown): StatusCause[] {
  if (labels === undefined || labels === null) return [];
  if (typeof labels !== 'object') return [invalidValue('metadata.labels', labels, 'must be a map')];
  const problems: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels as Record<string, unknown>)) {
    const slash = key.lastIndexOf('/');
    const prefix = slash >= 0 ? key.slice(0, slash) : '';
    const local = slash >= 0 ? key.slice(slash + 1) : key;
    if (
      local.length > 63 ||
      !QUALIFIED_NAME.test(local) ||
      (slash >= 0 && (prefix.length > 253 || !SUBDOMAIN.test(prefix)))
    ) {
      problems.push(
        invalidValue(
          'metadata.labels',
          key,
          "name part must consist of alphanumeric characters, '-', '_' or '.'",
        ),
      );
    }
    if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) {
      problems.push(
        invalidValue(
          'metadata.labels',
          value,
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
    }
  }
  return problems;
}
