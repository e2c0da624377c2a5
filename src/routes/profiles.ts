import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.js';
import { parseIdentityQuery } from '../model/identities.js';
import { errorResponses, exampleId, idParam, notFound, recordResponse } from '../http/schemas/responses.js';
import { profileRecord, withExample } from '../http/schemas/examples.js';
import type { RouteOptions } from '../services.js';

const tags = ['profiles'];

const erasedCounts = {
  type: 'object',
  properties: {
    profiles: { type: 'integer' },
    sessions: { type: 'integer' },
    events: { type: 'integer' },
    identities: { type: 'integer' },
    aliases: { type: 'integer', description: 'ids of profiles merged into it' },
    rejected: { type: 'integer', description: 'quarantined requests of the profile or its sessions' },
  },
} as const;

/** Profiles: one by id (an alias answers its survivor), by identity, and erasure (docs/api.md#profiles). */
export default async function profileRoutes(app: FastifyInstance, { services }: RouteOptions) {
  const { store } = services;

  app.get<{ Querystring: { identity: string } }>(
    '/profiles',
    {
      schema: {
        tags,
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
              examples: ['email:ana@example.com'],
            },
          },
        },
        response: {
          200: withExample(
            {
              type: 'object',
              properties: { result: { type: 'array', items: { $ref: 'Profile#' } } },
            },
            { result: [profileRecord] },
            'The profile holding the identity, or an empty list',
          ),
          ...errorResponses(401, {
            status: 422,
            description: 'The identity is not `<type>:<value>` with a type of [a-z_]{1,32}',
            example: {
              detail: [
                {
                  loc: ['querystring', 'identity'],
                  msg: 'must be <type>:<value> with a type of [a-z_]{1,32}',
                  type: 'value_error.identity',
                },
              ],
            },
          }),
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
        tags,
        summary: 'One stored profile (the survivor, for the id of a merged profile)',
        params: exampleId(idParam, profileRecord.id),
        response: {
          200: recordResponse('Profile#', 'The profile', profileRecord),
          ...errorResponses(400, 401, notFound('Profile', profileRecord.id), 422),
        },
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
        tags,
        summary: 'Erase a profile with its sessions, events, identities, aliases and quarantined requests',
        params: exampleId(idParam, profileRecord.id),
        response: {
          200: {
            description: 'Erased: how many records of each kind were deleted',
            examples: [
              { deleted: { profiles: 1, sessions: 2, events: 14, identities: 1, aliases: 0, rejected: 1 } },
            ],
            type: 'object',
            properties: { deleted: erasedCounts },
          },
          ...errorResponses(400, 401, notFound('Profile', profileRecord.id), 422),
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
