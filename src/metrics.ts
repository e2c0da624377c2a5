import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { pendingByDestination } from './domain/delivery/management.js';
import type { DeliveryObserver, PipelineObserver } from './domain/observer.js';
import type { Store } from './storage/store.js';

/**
 * Prometheus metrics of one app (its own registry, so several apps can live in one process):
 * requests by route and status, events accepted/rejected/stored, commit latency, write queue depth,
 * and delivery to destinations (docs/api.md#metrics).
 */
export class Metrics implements PipelineObserver, DeliveryObserver {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'collector_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly events = new Counter({
    name: 'collector_events_total',
    help: 'Events by outcome: accepted (answered 200), stored (committed), rejected and dropped (by reason)',
    labelNames: ['outcome', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly dropped = new Counter({
    name: 'collector_rejected_dropped_total',
    help: 'Refused requests not kept in the quarantine: over its per-source rate, or deleted by retention',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly rules = new Counter({
    name: 'collector_profile_rules_applied_total',
    help: 'Profile rules applied to events of committed requests (one per rule and event)',
    registers: [this.registry],
  });
  private readonly merges = new Counter({
    name: 'collector_profile_merges_total',
    help: 'Profiles merged into another (identity shared with a profile that held it first)',
    registers: [this.registry],
  });
  private readonly duplicates = new Counter({
    name: 'collector_duplicate_events_total',
    help: 'Events not stored because an event with the same client id is stored for the source',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  private readonly commits = new Histogram({
    name: 'collector_commit_duration_seconds',
    help: 'Time from handing a write set to the store until it is durable (includes group-commit wait)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  private readonly delivered = new Counter({
    name: 'collector_delivery_events_total',
    help: 'Events delivered to destinations (answered 2xx), by destination, by this process',
    labelNames: ['destination'] as const,
    registers: [this.registry],
  });
  private readonly attempts = new Counter({
    name: 'collector_delivery_batches_total',
    help: 'Batches sent by this process, by destination and outcome: delivered, retry, failed (moved to the failed list)',
    labelNames: ['destination', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly lag = new Histogram({
    name: 'collector_delivery_latency_seconds',
    help: 'Time from an event being stored to its delivery (2xx) to a destination',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
    registers: [this.registry],
  });
  private readonly expired = new Counter({
    name: 'collector_events_expired_total',
    help: 'Events deleted by retention (TRACK_EVENT_RETENTION_DAYS)',
    registers: [this.registry],
  });

  constructor(store: Store) {
    new Gauge({
      name: 'collector_delivery_pending',
      help: 'Stored events matching a destination not delivered yet, by destination',
      labelNames: ['destination'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          for (const [destination, n] of await pendingByDestination(store)) this.set({ destination }, n);
        } catch {
          // the store is unavailable: no figure this time
        }
      },
    });
    new Gauge({
      name: 'collector_write_queue_depth',
      help: 'Write sets waiting for a commit',
      registers: [this.registry],
      collect() {
        this.set(store.queueDepth);
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'collector_' });
  }

  rejectedDropped(count: number, reason: string): void {
    this.dropped.inc({ reason }, count);
  }

  eventsAccepted(count: number): void {
    this.events.inc({ outcome: 'accepted', reason: '' }, count);
  }

  eventsStored(count: number): void {
    if (count > 0) this.events.inc({ outcome: 'stored', reason: '' }, count);
  }

  eventsRejected(count: number, reason: string): void {
    this.events.inc({ outcome: 'rejected', reason }, count);
  }

  rulesApplied(count: number): void {
    if (count > 0) this.rules.inc(count);
  }

  profilesMerged(count: number): void {
    if (count > 0) this.merges.inc(count);
  }

  eventsExpired(count: number): void {
    this.expired.inc(count);
  }

  eventsDuplicate(sourceId: string, count: number): void {
    // Only stored (existing) sources reach a commit: the label values are bounded.
    this.duplicates.inc({ source: sourceId }, count);
  }

  eventsDropped(count: number, reason: 'bot'): void {
    this.events.inc({ outcome: 'dropped', reason }, count);
  }

  commitDuration(seconds: number): void {
    this.commits.observe(seconds);
  }

  batchDelivered(destination: string, lagsSec: number[]): void {
    this.attempts.inc({ destination, outcome: 'delivered' });
    this.delivered.inc({ destination }, lagsSec.length);
    for (const seconds of lagsSec) this.lag.observe(seconds);
  }

  batchNotDelivered(destination: string, outcome: 'retry' | 'failed'): void {
    this.attempts.inc({ destination, outcome });
  }

  /** Counts every answered request by its route pattern (bounded label values). */
  register(app: FastifyInstance): void {
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? '(unmatched)';
      this.requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    });
  }
}
