import type { Notifications } from '../../platform/notifications/notifications.js'
import type { Tx } from '../../platform/storage/transaction.js'

/**
 * "There is webhook work": sent by whatever makes deliveries due (fan-out, a retry, an enabled endpoint), heard
 * by every worker process. PostgreSQL collapses the signals of one transaction into one, and a worker that is
 * already busy folds any number of them into a single extra pass, so they cost nothing per row.
 */
export class WakeSignal {
  constructor(private readonly notifications: Notifications) {}

  send(tx: Tx): Promise<void> {
    return this.notifications.send(tx, 'herald_webhooks', 'work')
  }

  on(handler: () => void): void {
    this.notifications.on('herald_webhooks', handler)
    // Signals sent while the listener was away are lost: look for work once it is back.
    this.notifications.onReconnect(handler)
  }
}
