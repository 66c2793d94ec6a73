/**
 * Kubernetes resource quantities ("500m", "8", "32Gi", "1.5G", "1e3") and Spark memory
 * strings ("4g"), computed exactly (bigint) so "0.1" cpu is exactly 100 millicores.
 */

/** Thrown for text that is not a valid quantity. */
export class InvalidQuantityError extends Error {
  override readonly name = 'InvalidQuantityError';
  readonly text: string;
  constructor(text: string, what: string) {
    super(`invalid ${what} ${JSON.stringify(text)}`);
    this.text = text;
  }
}

const QUANTITY =
  /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

const BINARY: Readonly<Record<string, bigint>> = {
  Ki: 2n ** 10n,
  Mi: 2n ** 20n,
  Gi: 2n ** 30n,
  Ti: 2n ** 40n,
  Pi: 2n ** 50n,
  Ei: 2n ** 60n,
};
const DECIMAL_EXPONENT: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** The quantity as an exact fraction numerator / denominator (denominator > 0). */
function toFraction(text: string, what: string): { numerator: bigint; denominator: bigint } {
  const match = QUANTITY.exec(text);
  if (match === null) throw new InvalidQuantityError(text, what);
  const [, sign = '', number = '', suffix = ''] = match;
  const [whole = '', fraction = ''] = number.split('.');
  let numerator = BigInt(`${whole}${fraction}` || '0') * (sign === '-' ? -1n : 1n);
  let denominator = 10n ** BigInt(fraction.length);
  const binary = BINARY[suffix];
  if (binary !== undefined) {
    numerator *= binary;
  } else {
    const exponent = DECIMAL_EXPONENT[suffix] ?? Number(suffix.slice(1));
    if (Math.abs(exponent) > 60) throw new InvalidQuantityError(text, what);
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  return { numerator, denominator };
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  const q = numerator / denominator;
  return numerator % denominator > 0n ? q + 1n : q;
}

function toSafeNumber(value: bigint, text: string, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER))
    throw new InvalidQuantityError(text, what);
  return Number(value);
}

/** True when `text` is a syntactically valid Kubernetes quantity. */
export function isQuantity(text: string): boolean {
  return QUANTITY.test(text);
}

/** CPU quantity → millicores, rounded up like Kubernetes ("500m" → 500, "2" → 2000). */
export function parseCpuMillicores(text: string): number {
  const { numerator, denominator } = toFraction(text, 'cpu quantity');
  return toSafeNumber(ceilDiv(numerator * 1000n, denominator), text, 'cpu quantity');
}

/** Memory quantity → bytes, rounded up ("32Gi" → 34359738368, "1G" → 1e9). */
export function parseMemoryBytes(text: string): number {
  const { numerator, denominator } = toFraction(text, 'memory quantity');
  return toSafeNumber(ceilDiv(numerator, denominator), text, 'memory quantity');
}

const SPARK_MEMORY = /^([0-9]+)([kmgtp]?)b?$/i;
const SPARK_UNIT: Readonly<Record<string, bigint>> = {
  '': 2n ** 20n, // Spark reads a bare number of driver/executor memory as MiB.
  k: 2n ** 10n,
  m: 2n ** 20n,
  g: 2n ** 30n,
  t: 2n ** 40n,
  p: 2n ** 50n,
};

/** True for a Spark JVM memory string ("512m", "4g"). */
export function isSparkMemory(text: string): boolean {
  return SPARK_MEMORY.test(text);
}

/** Spark memory string → bytes ("4g" → 4 GiB; a bare number is MiB, as in spark.*.memory). */
export function parseSparkMemoryBytes(text: string): number {
  const match = SPARK_MEMORY.exec(text);
  if (match === null) throw new InvalidQuantityError(text, 'Spark memory');
  const [, digits = '0', unit = ''] = match;
  return toSafeNumber(
    BigInt(digits) * (SPARK_UNIT[unit.toLowerCase()] ?? 1n),
    text,
    'Spark memory',
  );
}
