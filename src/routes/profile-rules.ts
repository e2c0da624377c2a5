import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { deleteRule, saveRule } from '../domain/rules/manage.js';
import { eventType, profileRuleInput, type ProfileRuleInput } from '../model/payloads.js';
import {
  deletedOne,
  errorResponses,
  exampleId,
  idParam,
  listOf,
  notFound,
  recordResponse,
} from '../http/schemas/responses.js';
import { profileRuleInput as ruleExample, profileRuleRecord, withExample } from '../http/schemas/examples.js';
import type { RouteOptions } from '../services.js';

const tags = ['profile rules'];
const rule = { $ref: 'ProfileRule#' };

/** The 422 of a rule that cannot be saved: the operation and field it names. */
const refused = {
  status: 422,
  description: 'The rule breaks its shape, or an operation cannot be used (each named with its field)',
  example: {
    detail: [
      {
        loc: ['body', 'operations', 0, 'path'],
        msg: 'set: `path` must be a dotted path under traits.public, traits.private, consents, interests',
        type: 'value_error.operation',
      },
    ],
  },
};

/** Profile rules (docs/api.md#profile-rules). */
export default async function profileRuleRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store } = services;

  app.post<{ Body: ProfileRuleInput }>(
    '/profile-rule',
    {
      schema: {
        tags,
        summary: 'Create or replace a profile rule',
        description:
          'Every operation is checked: paths under traits.public, traits.private, consents or interests, `value` or `from` as the operation needs, bounded values; otherwise 422 naming the operation and field.',
        body: withExample(profileRuleInput, ruleExample),
        response: {
          200: recordResponse('ProfileRule#', 'The rule as stored', profileRuleRecord),
          ...errorResponses(400, 401, 413, 415, refused),
        },
      },
    },
    async (request) => saveRule(services, request.body),
  );

  app.get<{ Querystring: { event_type?: string } }>(
    '/profile-rules',
    {
      schema: {
        tags,
        summary: 'List profile rules in the order they apply',
        querystring: { type: 'object', properties: { event_type: eventType } },
        response: {
          200: withExample(
            listOf(rule),
            { total: 1, result: [profileRuleRecord] },
            'The rules (of one event type), in the order they were first saved',
          ),
          ...errorResponses(401, 422),
        },
      },
    },
    async (request) => {
      const result = await store.listProfileRules({ eventType: request.query.event_type });
      return { total: result.length, result };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/profile-rule/:id',
    {
      schema: {
        tags,
        summary: 'One profile rule',
        params: exampleId(idParam, profileRuleRecord.id),
        response: {
          200: recordResponse('ProfileRule#', 'The profile rule', profileRuleRecord),
          ...errorResponses(400, 401, notFound('Profile rule', profileRuleRecord.id), 422),
        },
      },
    },
    async (request) =>
      (await store.getProfileRule(request.params.id)) ??
      Promise.reject(errors.notFound('Profile rule', request.params.id)),
  );

  app.delete<{ Params: { id: string } }>(
    '/profile-rule/:id',
    {
      schema: {
        tags,
        summary: 'Delete a profile rule',
        params: exampleId(idParam, profileRuleRecord.id),
        response: {
          200: withExample(deletedOne, { deleted: 1 }, 'Deleted'),
          ...errorResponses(400, 401, notFound('Profile rule', profileRuleRecord.id), 422),
        },
      },
    },
    async (request) => {
      if (!(await deleteRule(services, request.params.id))) {
        throw errors.notFound('Profile rule', request.params.id);
      }
      return { deleted: 1 };
    },
  );
}
