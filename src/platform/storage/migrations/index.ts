/**
 * The schema's migrations, in order; forward-only. `0001-baseline` creates the schema of the first release. A change
 * to the schema is a new migration whose name sorts after the last; a migration is never edited, renamed or removed
 * once released, and there are no down migrations (going back means restoring a backup). Each migration names its
 * module for each dialect: the dialect is chosen here and nowhere else, and a migration that is the same on both
 * names the same module twice.
 */
import type { Migration } from 'kysely'
import type { DialectName } from '../dialects/index.js'
import * as postgresBaseline from './baseline/postgres.js'
import * as sqliteBaseline from './baseline/sqlite.js'
import * as postgresSignIn from './sign-in/postgres.js'
import * as sqliteSignIn from './sign-in/sqlite.js'
import * as postgresRefreshTokens from './refresh-tokens/postgres.js'
import * as sqliteRefreshTokens from './refresh-tokens/sqlite.js'
import * as postgresLogout from './logout/postgres.js'
import * as sqliteLogout from './logout/sqlite.js'
import * as postgresBackchannelLogout from './backchannel-logout/postgres.js'
import * as sqliteBackchannelLogout from './backchannel-logout/sqlite.js'
import * as postgresConsoleLinks from './console-links/postgres.js'
import * as sqliteConsoleLinks from './console-links/sqlite.js'
import * as postgresEndpointStats from './endpoint-stats/postgres.js'
import * as sqliteEndpointStats from './endpoint-stats/sqlite.js'
import * as postgresTenantKeys from './tenant-keys/postgres.js'
import * as sqliteTenantKeys from './tenant-keys/sqlite.js'
import * as serverRecord from './server-record/tables.js'
import * as attemptRequests from './attempt-requests/tables.js'
import * as postLogoutUrl from './post-logout-url/tables.js'
import * as clientSource from './client-source/tables.js'
import * as postgresDeviceAuthorization from './device-authorization/postgres.js'
import * as sqliteDeviceAuthorization from './device-authorization/sqlite.js'
import * as postgresClientRegistration from './client-registration/postgres.js'
import * as sqliteClientRegistration from './client-registration/sqlite.js'
import * as postgresClientMetadataDocuments from './client-metadata-documents/postgres.js'
import * as sqliteClientMetadataDocuments from './client-metadata-documents/sqlite.js'

/** The baseline: what databases of development builds, migrated before it existed, are recorded as (see pre-baseline.ts). */
export const BASELINE = '0001-baseline'

const MIGRATIONS: Record<string, Record<DialectName, Migration>> = {
  [BASELINE]: { postgres: postgresBaseline, sqlite: sqliteBaseline },
  '0002-sign-in': { postgres: postgresSignIn, sqlite: sqliteSignIn },
  '0003-refresh-tokens': { postgres: postgresRefreshTokens, sqlite: sqliteRefreshTokens },
  '0004-logout': { postgres: postgresLogout, sqlite: sqliteLogout },
  '0005-backchannel-logout': { postgres: postgresBackchannelLogout, sqlite: sqliteBackchannelLogout },
  '0006-console-links': { postgres: postgresConsoleLinks, sqlite: sqliteConsoleLinks },
  '0007-endpoint-stats': { postgres: postgresEndpointStats, sqlite: sqliteEndpointStats },
  '0008-tenant-keys': { postgres: postgresTenantKeys, sqlite: sqliteTenantKeys },
  '0009-server-record': { postgres: serverRecord, sqlite: serverRecord },
  '0010-attempt-requests': { postgres: attemptRequests, sqlite: attemptRequests },
  '0011-post-logout-url': { postgres: postLogoutUrl, sqlite: postLogoutUrl },
  '0012-client-source': { postgres: clientSource, sqlite: clientSource },
  '0013-device-authorization': { postgres: postgresDeviceAuthorization, sqlite: sqliteDeviceAuthorization },
  '0014-client-registration': { postgres: postgresClientRegistration, sqlite: sqliteClientRegistration },
  '0015-client-metadata-documents': { postgres: postgresClientMetadataDocuments, sqlite: sqliteClientMetadataDocuments },
}

/** Where Kysely's migrator records the migrations that have run. */
export const MIGRATION_TABLE = 'herald_migrations'

/** Every migration for one dialect, by name. */
export function migrationsFor(dialect: DialectName): Record<string, Migration> {
  return Object.fromEntries(Object.entries(MIGRATIONS).map(([name, modules]) => [name, modules[dialect]]))
}
