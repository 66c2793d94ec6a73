import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './deploy-tools.ts';

interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly string[];
}

/** The Dockerfile's stages, each with its instructions (continuation lines joined). */
function stages(file: string): Stage[] {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8').replace(/\\\n/g, ' ');
  const result: { from: string; name: string | undefined; instructions: string[] }[] = [];
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from !== null) result.push({ from: from[1]!, name: from[2], instructions: [] });
    else result.at(-1)?.instructions.push(line);
  }
  return result;
}

/** The stage a build without `--target` produces, followed through `FROM <stage>` aliases. */
function defaultImage(all: readonly Stage[]): Stage[] {
  const chain: Stage[] = [];
  let stage = all.at(-1);
  while (stage !== undefined) {
    chain.push(stage);
    const from = stage.from;
    stage = all.find((s) => s.name === from);
  }
  return chain;
}

/** The instruction in force for the image: the last one in the nearest stage that has it. */
function effective(chain: readonly Stage[], instruction: string): string | undefined {
  for (const stage of chain) {
    const found = stage.instructions.filter((line) =>
      line.toUpperCase().startsWith(`${instruction} `),
    );
    if (found.length > 0) return found.at(-1);
  }
  return undefined;
}

/** The path a stage copies `jobs/spark/requirements.txt` to, and the RUN that installs from it. */
function jobRequirementsInstall(stage: Stage): { path: string; run: string | undefined } {
  const copy = stage.instructions
    .map((line) => /^COPY\s+(?:--\S+\s+)*jobs\/spark\/requirements\.txt\s+(\S+)$/i.exec(line))
    .find((match) => match !== null);
  expect(copy, 'COPY jobs/spark/requirements.txt').toBeDefined();
  const path = copy![1]!;
  return {
    path,
    run: stage.instructions.find((line) => /^RUN\s/i.test(line) && line.includes(`-r ${path}`)),
  };
}

/** Pip installs the job's packages from that list without leaving pip's cache in the image. */
function expectLeanInstall(run: string | undefined): void {
  expect(run).toMatch(/\bpip3? install\b/);
  expect(run).toContain('--no-cache-dir');
}

describe('deploy/docker/spark-job.Dockerfile', () => {
  it("installs the job's pinned Python packages (jobs/spark/requirements.txt: OpenTelemetry for its span)", () => {
    const [image] = stages('deploy/docker/spark-job.Dockerfile');
    expectLeanInstall(jobRequirementsInstall(image!).run);
  });
});

describe('deploy/docker/service.Dockerfile', () => {
  const all = stages('deploy/docker/service.Dockerfile');

  it('builds the service image when no --target is given (compose and plain docker build rely on it)', () => {
    const chain = defaultImage(all);
    expect(chain.map((stage) => stage.name)).toContain('service');
    expect(chain.map((stage) => stage.name)).not.toContain('dispatcher-local');
  });

  it('runs the service as a non-root user, with a health check and the service entry point', () => {
    const chain = defaultImage(all);
    expect(effective(chain, 'USER')).toMatch(/^USER [1-9]\d*:[1-9]\d*$/);
    expect(effective(chain, 'HEALTHCHECK')).toMatch(/\/healthz/);
    expect(effective(chain, 'CMD')).toBe('CMD ["node", "src/main.ts"]');
  });

  it("installs the job's pinned Python packages in dispatcher-local, into the Python the local runner runs the job with", () => {
    const stage = all.find((s) => s.name === 'dispatcher-local')!;
    const { run } = jobRequirementsInstall(stage);
    expectLeanInstall(run);
    // LocalRunner runs the job with $ICEPACK_CACHE/venv/bin/python (its python and
    // PYSPARK_PYTHON); the stage points that path at the image's Python and installs with it.
    const cache = /\bICEPACK_CACHE=(\S+)/.exec(effective([stage], 'ENV') ?? '')?.[1];
    expect(cache).toBeDefined();
    expect(run).toContain(`${cache!}/venv/bin/python -m pip install`);
  });

  it('gives dispatcher-local’s user an /etc/passwd entry (spark-submit fails for a uid without a name)', () => {
    const stage = all.find((s) => s.name === 'dispatcher-local')!;
    const uid = /^USER (\d+):/.exec(effective([stage], 'USER') ?? '')?.[1];
    expect(uid).toBeDefined();
    const useradd = stage.instructions.filter((line) => /^RUN\s.*\buseradd\b/i.test(line));
    expect(useradd.join('\n')).toMatch(new RegExp(`useradd [^&]*--uid ${uid!}\\b`));
  });

  it('runs dispatcher-local as a non-root user too', () => {
    const stage = all.find((s) => s.name === 'dispatcher-local')!;
    expect(effective([stage], 'USER')).toMatch(/^USER [1-9]\d*:[1-9]\d*$/);
    expect(effective([stage], 'HEALTHCHECK')).toMatch(/\/healthz/);
  });
});
