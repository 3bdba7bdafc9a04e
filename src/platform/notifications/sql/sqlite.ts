import type { NotificationTransport } from './transport.js'

/** SQLite serves one server process: its signals are the in-process handlers alone. */
export const sqliteNotificationTransport: NotificationTransport = {
  notify: async () => {},
  inStatement: () => undefined,
  listen: async () => {},
  close: async () => {},
}
