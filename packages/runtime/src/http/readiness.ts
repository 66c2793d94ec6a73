/** What a readiness check reports; `detail` explains a failure (no secrets). */
export interface CheckResult {
  readonly ok: boolean;
  readonly detail?: string;
}

/** One dependency `/readyz` asks about, e.g. `{name: 'kafka', check: () => kafka.health()}`. */
export interface ReadinessCheck {
  readonly name: string;
  readonly check: () => CheckResult | boolean | Promise<CheckResult | boolean>;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Record<string, CheckResult>;
  readonly failing: readonly string[];
}

/** Runs every check concurrently; a check that throws or exceeds `timeoutMs` fails. */
export async function runReadinessChecks(
  checks: readonly ReadinessCheck[],
  timeoutMs: number,
): Promise<ReadinessReport> {
  const results = await Promise.all(checks.map((check) => runOne(check, timeoutMs)));
  const report: Record<string, CheckResult> = {};
  const failing: string[] = [];
  checks.forEach((check, index) => {
    const result = results[index] ?? { ok: false, detail: 'no result' };
    report[check.name] = result;
    if (!result.ok) failing.push(check.name);
  });
  return { ready: failing.length === 0, checks: report, failing };
}

async function runOne(check: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, detail: `timed out after ${timeoutMs}ms` }),
      timeoutMs,
    );
  });
  try {
    const result = await Promise.race([Promise.resolve().then(check.check), timeout]);
    return typeof result === 'boolean' ? { ok: result } : result;
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
