import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { parseIdentityQuery } from '../model/identities.js';
import { errorResponses, idParam } from '../http/schemas/responses.js';
import type { RouteOptions } from '../services.js';

/** Profiles: one by id (or alias), by identity, and erasure (docs/api.md#profiles). */
export default async function profileRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store } = services;

  app.get<{ Querystring: { identity: string } }>(
    '/profiles',
    {
      schema: {
        tags: ['profiles'],
        summary: 'The profile holding an identity',
        querystring: {
          type: 'object',
          required: ['identity'],
          properties: {
            identity: {
              type: 'string',
              minLength: 3,
              maxLength: 300,
              description: '`<type>:<value>`, such as `email:ana@example.com` (the value is normalised)',
            },
          },
        },
        response: {
          200: { type: 'object', properties: { result: { type: 'array', items: { $ref: 'Profile#' } } } },
          ...errorResponses(401, 422, 503),
        },
      },
    },
    async (request) => {
      const key = parseIdentityQuery(request.query.identity);
      if (key === null) {
        throw errors.invalid(
          ['querystring', 'identity'],
          'must be <type>:<value> with a type of [a-z_]{1,32}',
          'value_error.identity',
        );
      }
      if (key === 'blocked') return { result: [] };
      const profile = await store.findProfileByIdentity(key);
      return { result: profile ? [profile] : [] };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/profile/:id',
    {
      schema: {
        tags: ['profiles'],
        summary: 'One stored profile',
        params: idParam,
        response: { 200: { $ref: 'Profile#' }, ...errorResponses(401, 404, 503) },
      },
    },
    async (request) =>
      (await store.getProfile(request.params.id)) ??
      Promise.reject(errors.notFound('Profile', request.params.id)),
  );

  app.delete<{ Params: { id: string } }>(
    '/profile/:id',
    {
      schema: {
        tags: ['profiles'],
        summary: 'Erase a profile with its sessions and events',
        params: idParam,
        response: {
          200: {
            type: 'object',
            properties: {
              deleted: {
                type: 'object',
                properties: {
                  profiles: { type: 'integer' },
                  sessions: { type: 'integer' },
                  events: { type: 'integer' },
                  identities: { type: 'integer' },
                  aliases: { type: 'integer' },
                  rejected: { type: 'integer', description: 'quarantined requests of the profile' },
                },
              },
            },
          },
          ...errorResponses(401, 404, 503),
        },
      },
    },
    async (request) => {
      const deleted = await store.eraseProfile(request.params.id);
      if (!deleted) throw errors.notFound('Profile', request.params.id);
      return { deleted };
    },
  );
}
