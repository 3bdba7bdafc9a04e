import type { RawBuilder } from 'kysely'
import type { Change } from '../change-feed.js'

/** Reads the changes committed since its last read; each dialect knows what "since" means. */
export interface LogReader {
  /** Takes the log's current end as the starting point: a process that just started has nothing cached. */
  start(): Promise<void>
  read(): Promise<Change[]>
  /** Which changes older than `before` every reader has surely read, so that pruning them loses none. */
  prunable(before: number): RawBuilder<boolean>
}
