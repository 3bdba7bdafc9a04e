import type { RefreshTokensTable } from '../../../platform/storage/schema.js'

/** A refresh token row as it is first stored: unspent, with no successor. */
export type NewRefreshTokenRow = Omit<RefreshTokensTable, 'account_id' | 'spent_at' | 'successor'>

/** The spending of a refresh token: when, and the successor sealed for a retry within the reuse interval. */
export interface Spending {
  id: string
  at: number
  sealedSuccessor: string | null
}

/** How the database's dialect writes one rotation. */
export interface RotationSql {
  /**
   * Spends the token (only if it is unspent: a compare-and-set) and stores its successor, both or neither, durably
   * once it returns; false, with nothing written, when another request spent the token first.
   */
  rotate(accountId: string, spending: Spending, successor: NewRefreshTokenRow): Promise<boolean>
}
