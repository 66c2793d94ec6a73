import type { Counter, Histogram, Meter } from '@opentelemetry/api';

/** The scanner's own metrics (Prometheus names: `icepack_scanner_…`). */
export class ScannerMetrics {
  readonly scanned: Counter;
  readonly skipped: Counter;
  readonly failed: Counter;
  readonly gone: Counter;
  readonly scanSeconds: Histogram;
  readonly discovered: Counter;
  readonly commitsDebounced: Counter;

  constructor(meter: Meter) {
    this.scanned = meter.createCounter('icepack.scanner.tables.scanned', {
      description: 'Tables whose TableState was computed and published',
    });
    this.skipped = meter.createCounter('icepack.scanner.tables.skipped', {
      description: 'Scan requests that needed no work (reason: unchanged, unbound)',
    });
    this.failed = meter.createCounter('icepack.scanner.tables.failed', {
      description: 'Scan attempts that failed (retried or dead-lettered)',
    });
    this.gone = meter.createCounter('icepack.scanner.tables.tombstoned', {
      description: 'Tables found dropped: a tombstone was published',
    });
    this.scanSeconds = meter.createHistogram('icepack.scanner.scan.duration.seconds', {
      description: 'Time to scan one table (load, read new manifests, publish)',
      unit: 's',
      advice: {
        explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      },
    });
    this.discovered = meter.createCounter('icepack.scanner.discovery.tables', {
      description: 'Tables found by discovery walks',
    });
    this.commitsDebounced = meter.createCounter('icepack.scanner.commits', {
      description: 'Commit events by outcome (scheduled, debounced, unbound)',
    });
  }
}
