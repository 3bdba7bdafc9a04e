import { useEffect, useState } from 'preact/hooks'
import { type Page, api, query } from './api.js'
import { Link } from './router.js'
import { SCOPES, can, onSessionChange } from './session.js'
import type { Client, Endpoint } from './types.js'

// What the console calls endpoints and clients: an endpoint's description or URL, a client's name, never only an id.
// Each is read once for the session with one list call (a page of the API's largest size), shared by every row
// that names one, and read again when an id turns up that the last read did not have (made since, or deleted).

/** Pages read at most: an account with more than this many shows the rest by id. */
const MOST_PAGES = 5
const PAGE_SIZE = 200

/** The names of one kind of thing for the signed-in account, read on first use. */
class NameBook<T> {
  #names: Map<string, string> | undefined
  #reading: Promise<Map<string, string>> | undefined
  /** Ids already looked for since they first went missing: asking again reads nothing more. */
  readonly #missed = new Set<string>()

  constructor(
    private readonly path: string,
    private readonly readable: () => boolean,
    private readonly nameOf: (item: T) => [id: string, name: string],
  ) {
    onSessionChange(() => this.forget())
  }

  /** The name, if it is known now. */
  known(id: string): string | undefined {
    return this.#names?.get(id)
  }

  /** The name, reading the list when it hasn't been read, or when `id` is new to it; undefined for an unknown id. */
  async lookUp(id: string): Promise<string | undefined> {
    if (!this.readable()) return undefined
    let names = this.#names
    if (names === undefined || (!names.has(id) && !this.#missed.has(id))) names = await this.#read()
    if (!names.has(id)) this.#missed.add(id)
    return names.get(id)
  }

  /** Every id and its name, as read (reading them the first time). */
  async all(): Promise<Map<string, string>> {
    return this.readable() ? (this.#names ?? this.#read()) : new Map()
  }

  /** Drops what was read: a name changed, or the session did. */
  forget(): void {
    this.#names = undefined
    this.#reading = undefined
    this.#missed.clear()
  }

  /** One read at a time, shared by every look-up waiting for it. */
  #read(): Promise<Map<string, string>> {
    if (this.#reading) return this.#reading
    const reading = this.#readAll().then((names) => {
      // Unless forgotten meanwhile (a name or the session changed): then the next look-up reads again.
      if (this.#reading === reading) {
        this.#reading = undefined
        this.#names = names
      }
      return names
    })
    this.#reading = reading
    return reading
  }

  async #readAll(): Promise<Map<string, string>> {
    const names = new Map<string, string>()
    let cursor: string | null = null
    try {
      for (let page = 0; page < MOST_PAGES && (page === 0 || cursor); page++) {
        const read: Page<T> = await api('GET', `${this.path}${query({ limit: PAGE_SIZE, cursor })}`)
        for (const item of read.data) names.set(...this.nameOf(item))
        cursor = read.next_cursor
      }
    } catch {
      // Names are a convenience: ids stand in for them.
    }
    return names
  }
}

export const endpointNames = new NameBook<Endpoint>('/webhooks/endpoints', () => true, (endpoint) => [endpoint.id, endpoint.description.trim() || endpoint.url])

const clientNames = new NameBook<Client>('/oauth/clients', () => can(SCOPES.clientsRead), (client) => [client.client_id, client.client_name.trim() || client.client_id])

/** The name of `id` in `book`: known at once when it was read before, else once the book has read it. */
function useName<T>(book: NameBook<T>, id: string): string | undefined {
  const [name, setName] = useState(() => book.known(id))
  useEffect(() => {
    let live = true
    setName(book.known(id))
    void book.lookUp(id).then((found) => live && setName(found))
    return () => {
      live = false
    }
  }, [book, id])
  return name
}

/** The account's endpoints as [id, name], by name, for choosing one. */
export function useEndpointChoices(): Array<[id: string, name: string]> {
  const [choices, setChoices] = useState<Array<[string, string]>>([])
  useEffect(() => {
    let live = true
    void endpointNames.all().then((names) => live && setChoices([...names].sort(([, a], [, b]) => a.localeCompare(b))))
    return () => {
      live = false
    }
  }, [])
  return choices
}

/** An endpoint by its description or URL (its id until then, or if it is gone), linking to its page. */
export function EndpointName(props: { id: string }) {
  const name = useName(endpointNames, props.id)
  return (
    <span class={name === undefined ? 'mono' : 'name'} title={name === undefined ? undefined : `${name} (${props.id})`}>
      <Link to={`/endpoints/${props.id}`}>{name ?? props.id}</Link>
    </span>
  )
}

/** A client by its name (its id without one, or without the scope to read clients), linking to its page when readable. */
export function ClientName(props: { id: string }) {
  const name = useName(clientNames, props.id)
  const shown = name ?? props.id
  if (!can(SCOPES.clientsRead)) return <span class="mono">{props.id}</span>
  return (
    <span class={name === undefined ? 'mono' : 'name'} title={`${shown} (${props.id})`}>
      <Link to={`/clients/${props.id}`}>{shown}</Link>
    </span>
  )
}
