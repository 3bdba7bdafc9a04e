import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import { createDataFolder } from '../storage/data-folder.js'
import { SecretBox, generateMasterKeyText } from './secret-box.js'

/**
 * The SecretBox for `HERALD_SECRET_KEY`. Only development on SQLite may go without one: a key is generated
 * beside the database file (readable by its owner only) with a warning, so `npm start` works out of the box.
 */
export function resolveSecretBox(config: Config, log: FastifyBaseLogger): SecretBox {
  if (config.secretKey) return SecretBox.fromSecretKeyText(config.secretKey)
  if (config.database.dialect !== 'sqlite' || !config.development) {
    throw new Error('HERALD_SECRET_KEY is required with PostgreSQL or in production')
  }
  const file = path.join(path.dirname(path.resolve(config.database.filename)), 'secret.key')
  if (!existsSync(file)) {
    createDataFolder(path.dirname(file))
    writeFileSync(file, `${generateMasterKeyText()}\n`, { mode: 0o600 })
    chmodSync(file, 0o600)
    log.warn({ file }, 'HERALD_SECRET_KEY is not set: generated a development key; set HERALD_SECRET_KEY in production')
  }
  return SecretBox.fromSecretKeyText(readFileSync(file, 'utf8').trim())
}
