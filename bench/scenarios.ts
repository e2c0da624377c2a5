/**
 * The scenarios of `npm run bench`. A scenario is a name, the events per request and `prepare`,
 * which readies the service before the scenario's legs (against the service only) and gives the
 * request bodies; the service and the bare server are then sent the same bodies. To add one, add an
 * entry to SCENARIOS (new entries last: the order of the legs follows the list).
 */
import { timeOrderedId } from '../src/domain/ids.js';
import { CHROME_USER_AGENT, manyEvents, oneEvent, returningVisit, type Visitor } from './payloads.js';
import { apiJson, apiRequest, HOST, type Child } from './processes.js';

export interface Prepared {
  /** The next request body; called once per request. */
  body: () => string;
  /** Events that preparing stored in the scenario's source (counted by the stored-count check). */
  storedEvents?: number;
  /** Undoes what preparing changed in the service, after the legs. */
  cleanup?: () => Promise<void>;
  /**
   * Readies the service for the scenario's next legs and gives what undoes it after them, around
   * each of its blocks of legs: scenarios measured in turn (bench/measure.ts) each find the service
   * as they need it.
   */
  during?: () => Promise<() => Promise<void>>;
}

export interface Scenario {
  name: string;
  description: string;
  eventsPerRequest: number;
  /** Request headers besides content-type, for the service and the bare server alike. */
  headers?: Record<string, string>;
  /** Runs once before the scenario's legs; `sourceId` is the scenario's own event source. */
  prepare(service: Child, sourceId: string): Promise<Prepared>;
}

const VALIDATION_TYPE = 'page-view';
/** Known sessions of the returning-visitor scenario. */
const VISITORS = 2_000;
/** Requests in flight while making them. */
const VISITOR_CONNECTIONS = 16;

export const SCENARIOS: Scenario[] = [
  {
    name: '1-event',
    description: 'tracker first visit: unique session, no profile, page/browser/screen context, 1 page-view',
    eventsPerRequest: 1,
    prepare: async (_service, sourceId) => ({ body: oneEvent(sourceId) }),
  },
  {
    name: '100-events',
    description: '100 small events per request, unique session (the shape of Tracardi’s load test)',
    eventsPerRequest: 100,
    prepare: async (_service, sourceId) => ({ body: manyEvents(sourceId, 100) }),
  },
  {
    name: 'validation',
    description: '1-event payload with a JSON Schema active on page-view (event@properties)',
    eventsPerRequest: 1,
    async prepare(service, sourceId) {
      await apiJson(service, 'POST', '/event/management', {
        event_type: VALIDATION_TYPE,
        name: 'Page view',
        validation: {
          enabled: true,
          json_schema: {
            'event@properties': {
              type: 'object',
              properties: { path: { type: 'string' } },
              required: ['path'],
            },
          },
        },
      });
      return {
        body: oneEvent(sourceId),
        cleanup: async () =>
          void (await apiRequest(service, 'DELETE', `/event/management/${VALIDATION_TYPE}`)),
      };
    },
  },
  {
    name: 'returning-visitor',
    description:
      `a known session (one of ${VISITORS.toLocaleString('en-US')} made first) with its profile, ` +
      '1 page-view with a client id and timestamp, sent_at, a Chrome User-Agent',
    eventsPerRequest: 1,
    headers: { 'user-agent': CHROME_USER_AGENT },
    async prepare(service, sourceId) {
      const visitors = await firstVisits(service, sourceId, VISITORS, { 'user-agent': CHROME_USER_AGENT });
      return { body: returningVisit(sourceId, visitors), storedEvents: visitors.length };
    },
  },
  {
    name: 'ordered-session',
    description: '1-event with a time-ordered session id (UUID version 7), as the browser tracker makes it',
    eventsPerRequest: 1,
    prepare: async (_service, sourceId) => ({ body: oneEvent(sourceId, timeOrderedId) }),
  },
];

/** The scenarios whose name is or contains one of `filters` (all without filters). */
export function selectScenarios(filters: string[] | undefined): Scenario[] {
  const selected = filters
    ? SCENARIOS.filter((s) => filters.some((f) => s.name === f || s.name.includes(f)))
    : SCENARIOS;
  if (selected.length === 0) throw new Error(`no scenario matches ${filters?.join(',')}`);
  return selected;
}

/**
 * `count` first visits (1-event bodies) sent to the service, a few at a time; gives each one's
 * session and the profile the service made for it. Throws unless every answer is 200.
 */
export async function firstVisits(
  service: Child,
  sourceId: string,
  count: number,
  headers: Record<string, string>,
): Promise<Visitor[]> {
  const body = oneEvent(sourceId);
  const visitors: Visitor[] = [];
  const visit = async () => {
    const res = await fetch(`http://${HOST}:${service.port}/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: body(),
    });
    if (res.status !== 200) throw new Error(`POST /track (first visit): ${res.status} ${await res.text()}`);
    const answer = (await res.json()) as { session: { id: string }; profile: { id: string } };
    visitors.push({ sessionId: answer.session.id, profileId: answer.profile.id });
  };
  let started = 0;
  const connection = async () => {
    while (started < count) {
      started++;
      await visit();
    }
  };
  await Promise.all(Array.from({ length: VISITOR_CONNECTIONS }, connection));
  return visitors;
}
