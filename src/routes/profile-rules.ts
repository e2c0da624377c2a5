import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { deleteRule, saveRule } from '../domain/rules/manage.js';
import { eventType, profileRuleInput, type ProfileRuleInput } from '../model/payloads.js';
import { deletedOne, errorResponses, idParam, listOf } from '../http/schemas/responses.js';
import type { RouteOptions } from '../services.js';

const tags = ['profile rules'];
const rule = { $ref: 'ProfileRule#' };

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
        body: profileRuleInput,
        response: { 200: rule, ...errorResponses(400, 401, 422, 503) },
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
        response: { 200: listOf(rule), ...errorResponses(401, 422, 503) },
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
        params: idParam,
        response: { 200: rule, ...errorResponses(401, 404, 422, 503) },
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
        params: idParam,
        response: { 200: deletedOne, ...errorResponses(401, 404, 422, 503) },
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
