import { Type } from 'typebox'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { UserSessions } from './user-sessions.js'

const Subject = Type.String({ minLength: 1, maxLength: 255, description: "The user's subject, as the login app gave it" })

const SessionSchema = named(
  'Session',
  Type.Object(
    {
      id: Type.String({ description: 'The `sid` of the ID tokens issued in it' }),
      subject: Type.String(),
      auth_time: Type.String({ format: 'date-time' }),
      acr: Type.Union([Type.String(), Type.Null()]),
      amr: Type.Array(Type.String()),
      remembered: Type.Boolean({ description: 'Later logins in its browser are skipped' }),
      expires_at: Type.String({ format: 'date-time' }),
      created_at: Type.String({ format: 'date-time' }),
    },
    { description: "A user's browser session" },
  ),
)
const ConsentSchema = named(
  'Consent',
  Type.Object(
    {
      subject: Type.String(),
      client_id: Type.String(),
      scope: Type.Array(Type.String()),
      audience: Type.Array(Type.String()),
      expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Null: until revoked' }),
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Type.String({ format: 'date-time' }),
    },
    { description: 'A consent the user asked to be remembered' },
  ),
)
export const sessionSchemas = [SessionSchema, ConsentSchema]

const SessionsQuery = Type.Object({ ...PageQuery.properties, subject: Subject }, { additionalProperties: false })
const EndSessionsQuery = Type.Object({ subject: Subject, session_id: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false })
const ConsentsQuery = Type.Object({ ...PageQuery.properties, subject: Subject, client_id: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false })
const RevokeConsentsQuery = Type.Object({ subject: Subject, client_id: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false })

/** Sessions and consents of a subject, for the account's own user management (`herald:sessions:write`). */
export function sessionRoutes(app: App, sessions: UserSessions): void {
  const config = { scope: 'herald:sessions:write' as const }
  app.get(
    '/oauth/sessions',
    { config, schema: { summary: "A subject's live browser sessions, newest first", querystring: SessionsQuery, response: { 200: PageOf(ref(SessionSchema), 'A page of sessions'), ...problemResponses } } },
    async (request) => sessions.listSessions(request.account.id, request.query.subject, request.query.limit, request.query.cursor),
  )
  app.delete(
    '/oauth/sessions',
    { config, schema: { summary: "Ends a subject's sessions (or one): its browsers sign in anew; emits oauth.session.ended", querystring: EndSessionsQuery, response: { 204: Type.Null({ description: 'Ended' }), ...problemResponses } } },
    async (request, reply) => {
      await sessions.endSessions(request.account.id, request.query.subject, request.query.session_id)
      return reply.status(204).send(null)
    },
  )
  app.get(
    '/oauth/consents',
    { config, schema: { summary: "A subject's remembered consents", querystring: ConsentsQuery, response: { 200: PageOf(ref(ConsentSchema), 'A page of consents'), ...problemResponses } } },
    async (request) => sessions.listConsents(request.account.id, request.query.subject, request.query.client_id, request.query.limit, request.query.cursor),
  )
  app.delete(
    '/oauth/consents',
    {
      config,
      schema: {
        summary: "Revokes a subject's consents (to one client, or all) and every grant made under them; emits oauth.consent.revoked",
        querystring: RevokeConsentsQuery,
        response: { 204: Type.Null({ description: 'Revoked' }), ...problemResponses },
      },
    },
    async (request, reply) => {
      await sessions.revokeConsents(request.account.id, request.query.subject, request.query.client_id)
      return reply.status(204).send(null)
    },
  )
}
