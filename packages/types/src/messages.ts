import type { z } from 'zod';
import {
  envelopeBaseSchema,
  wrapEnvelope,
  type Envelope,
  type EnvelopeOptions,
} from './envelope.ts';
import { parseJsonExactly, stringifyJson } from './json-exact.ts';
import {
  MessageTypes,
  type MessagePayload,
  type MessageType,
  type MessageTypeSpec,
} from './message-types.ts';
import { ValidationError, zodIssues } from './validation-error.ts';

export type MessageEnvelope<T extends MessageType> = Envelope<T, MessagePayload<T>>;
export type AnyMessageEnvelope = { [T in MessageType]: MessageEnvelope<T> }[MessageType];

function isMessageType(type: string): type is MessageType {
  return Object.hasOwn(MessageTypes, type);
}

/**
 * Builds an envelope for `type` at its current version, validating the payload (so a bad
 * message never leaves the producer). Throws `ValidationError` with `payload.…` paths.
 */
export function createEnvelope<T extends MessageType>(
  type: T,
  key: string,
  payload: z.input<(typeof MessageTypes)[T]['payload']>,
  options?: EnvelopeOptions,
): MessageEnvelope<T> {
  const spec: MessageTypeSpec = MessageTypes[type];
  const result = spec.payload.safeParse(payload);
  if (!result.success)
    throw new ValidationError(`${type} payload`, zodIssues(result.error, ['payload']));
  if (key === '')
    throw new ValidationError(`${type} envelope`, [
      { path: 'key', message: 'must not be empty', code: 'too_small' },
    ]);
  const version = options?.version ?? spec.version;
  if (!spec.accepts.includes(version))
    throw new ValidationError(`${type} envelope`, [
      {
        path: 'version',
        message: `${type} has no version ${version}; this build accepts ${spec.accepts.join(', ')}`,
        code: 'invalid_value',
      },
    ]);
  return wrapEnvelope(type, version, key, result.data as MessagePayload<T>, options);
}

/**
 * Validates a decoded envelope: a known type at an accepted version, and its payload.
 * When `expected` is given, other types are rejected (a topic's consumer knows its types).
 */
export function parseEnvelope(
  value: unknown,
  expected?: readonly MessageType[],
): AnyMessageEnvelope {
  return parseEnvelopeValue(value, expected, false);
}

/** `fromJson`: `value` is what `JSON.parse` made, so a type's `exact` check may vouch for it. */
function parseEnvelopeValue(
  value: unknown,
  expected: readonly MessageType[] | undefined,
  fromJson: boolean,
  sent?: string | Uint8Array,
): AnyMessageEnvelope;
function parseEnvelopeValue(
  value: unknown,
  expected: readonly MessageType[] | undefined,
  fromJson: boolean,
  sent: string | Uint8Array | undefined,
  exactOnly: true,
): AnyMessageEnvelope | undefined;
/** `exactOnly`: undefined unless the type's `exact` check vouches for the payload. */
function parseEnvelopeValue(
  value: unknown,
  expected: readonly MessageType[] | undefined,
  fromJson: boolean,
  sent?: string | Uint8Array,
  exactOnly = false,
): AnyMessageEnvelope | undefined {
  const base = envelopeBaseSchema.safeParse(value);
  if (!base.success) throw new ValidationError('envelope', zodIssues(base.error));
  const { type, version } = base.data;
  if (!isMessageType(type) || (expected !== undefined && !expected.includes(type))) {
    const known = expected ?? (Object.keys(MessageTypes) as MessageType[]);
    throw new ValidationError('envelope', [
      {
        path: 'type',
        message: `unknown message type ${JSON.stringify(type)}; expected one of ${known.join(', ')}`,
        code: 'invalid_value',
      },
    ]);
  }
  const spec: MessageTypeSpec = MessageTypes[type];
  if (!spec.accepts.includes(version)) {
    throw new ValidationError('envelope', [
      {
        path: 'version',
        message: `unsupported version ${version} of ${type}; this build accepts ${spec.accepts.join(', ')}`,
        code: 'invalid_value',
      },
    ]);
  }
  const wire = spec.wire?.version === version ? spec.wire : undefined;
  const input = wire === undefined ? base.data.payload : wire.decode(base.data.payload);
  if (fromJson && spec.exact?.(input) === true) {
    if (sent !== undefined) wire?.keepSent?.(value as object, input as object, sent);
    return { ...base.data, type, payload: input } as AnyMessageEnvelope;
  }
  if (exactOnly) return undefined;
  const payload = spec.payload.safeParse(input);
  if (!payload.success)
    throw new ValidationError(`${type} envelope`, zodIssues(payload.error, ['payload']));
  return { ...base.data, type, payload: payload.data } as AnyMessageEnvelope;
}

/** Like `parseEnvelope`, for one expected type; the result is typed by it. */
export function parseEnvelopeOf<T extends MessageType>(
  type: T,
  value: unknown,
): MessageEnvelope<T> {
  return parseEnvelope(value, [type]) as MessageEnvelope<T>;
}

/** Decodes a Kafka message value (UTF-8 JSON, exact 64-bit integers) and validates it. */
export function parseMessage(
  bytes: Uint8Array | string,
  expected?: readonly MessageType[],
): AnyMessageEnvelope {
  // A view of the bytes, not `Buffer.from(bytes)`: that copies them (13 KB a table state).
  const text =
    typeof bytes === 'string'
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (
    expected !== undefined &&
    expected.length > 0 &&
    expected.every((t) => (MessageTypes[t] as MessageTypeSpec).exact !== undefined)
  ) {
    const vouched = parsePlainlyIfExact(text, bytes, expected);
    if (vouched !== undefined) return vouched;
  }
  let value: unknown;
  let plain: boolean;
  try {
    ({ value, plain } = parseJsonExactly(text));
  } catch (error) {
    throw new ValidationError(
      'envelope',
      [{ path: '', message: `not JSON: ${(error as Error).message}`, code: 'invalid_json' }],
      {
        cause: error,
      },
    );
  }
  // The message may stand for a part of the payload only when it was parsed plainly.
  return parseEnvelopeValue(value, expected, true, plain ? bytes : undefined);
}

/**
 * For types with an `exact` check: a plain `JSON.parse`, without `parseJsonExact`'s scan of
 * the text for integer literals beyond 2^53 (~0.03 ms of a 13 KB table state, issue 17). A
 * payload the check vouches for holds none (its numbers are safe integers or a share, the
 * envelope's version a safe integer), so the exact parse would give the same value. Anything
 * else — not JSON, a bad envelope, a payload left to the schema — is undefined, and parsed
 * again exactly, as before (same result, same error text).
 */
function parsePlainlyIfExact(
  text: string,
  sent: string | Uint8Array,
  expected: readonly MessageType[],
): AnyMessageEnvelope | undefined {
  try {
    return parseEnvelopeValue(JSON.parse(text), expected, true, sent, true);
  } catch {
    return undefined;
  }
}

/** The Kafka message value for an envelope. */
export function serializeEnvelope(envelope: Envelope): string {
  const spec = (MessageTypes as Record<string, MessageTypeSpec | undefined>)[envelope.type];
  const wire = spec?.wire;
  if (wire === undefined || wire.version !== envelope.version) return stringifyJson(envelope);
  // The payload in its version's shape (the planner stores that text of a TableScanned as it is).
  const payload = wire.encode(envelope.payload as never);
  return stringifyJson(
    payload === undefined ? { ...envelope, version: wire.plainVersion } : { ...envelope, payload },
  );
}
