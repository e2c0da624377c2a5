/** The response of GET /events/stats (docs/api.md#event-stats). */
import { withExample } from './examples.js';

const count = { type: 'integer', minimum: 0 } as const;

export const eventStatsExample = {
  since: '2026-11-22T05:10:00.000Z',
  until: '2026-11-22T05:39:03.607Z',
  total: 9,
  types: [
    { type: 'page-view', total: 6 },
    { type: 'purchase', total: 2 },
  ],
  other: { types: 1, total: 1 },
  minutes: [
    { minute: '2026-11-22T05:12:00.000Z', total: 4, counts: [3, 1], other: 0 },
    { minute: '2026-11-22T05:38:00.000Z', total: 5, counts: [3, 1], other: 1 },
  ],
};

export const eventStatsResponse = withExample(
  {
    type: 'object',
    required: ['since', 'until', 'total', 'types', 'other', 'minutes'],
    properties: {
      since: { type: 'string', format: 'date-time', description: 'start of the window (a whole minute)' },
      until: { type: 'string', format: 'date-time', description: 'end of the window (not included)' },
      total: { ...count, description: 'events inserted in the window' },
      types: {
        type: 'array',
        maxItems: 20,
        description: 'the 20 most frequent event types of the window at most, most frequent first',
        items: {
          type: 'object',
          required: ['type', 'total'],
          properties: { type: { type: 'string' }, total: count },
        },
      },
      other: {
        type: 'object',
        required: ['types', 'total'],
        description: 'the other event types of the window, counted together',
        properties: { types: count, total: count },
      },
      minutes: {
        type: 'array',
        description:
          'the minutes of the window that have events, oldest first; `counts[i]` counts `types[i]`, `other` the other types',
        items: {
          type: 'object',
          required: ['minute', 'total', 'counts', 'other'],
          properties: {
            minute: { type: 'string', format: 'date-time' },
            total: count,
            counts: { type: 'array', items: count },
            other: count,
          },
        },
      },
    },
  },
  eventStatsExample,
  'Events per minute and type in the window, by insert time',
);
