import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { DeliveryPage } from './pages/delivery.js'
import { Deliveries } from './pages/deliveries.js'
import { EndpointPage } from './pages/endpoint.js'
import { EventPage } from './pages/event.js'
import { EventTypes } from './pages/event-types.js'
import { Events } from './pages/events.js'
import { ClientPage } from './pages/client.js'
import { Clients } from './pages/clients.js'
import { Scopes } from './pages/scopes.js'
import { RegistrationTokens } from './pages/registration-tokens.js'
import { SettingsPage } from './pages/settings.js'
import { SubjectPage } from './pages/subject.js'
import { Endpoints } from './pages/endpoints.js'
import { SignIn, rememberAccount } from './pages/sign-in.js'
import { type SignInLink, exchangeSignInLink, takeSignInLink } from './link.js'
import { Link, type Place, usePlace } from './router.js'
import { SCOPES, type Session, can, currentSession, endSession, onSessionChange, setSignInNotice } from './session.js'
import { Empty } from './ui.js'

/** A path segment as typed; a malformed escape is kept as it is rather than breaking the page. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The page for a console path; unknown paths say so rather than showing a blank page. */
function Route(props: { place: Place }) {
  const { path } = props.place
  const [, section, id] = path.split('/').map(decodeSegment)
  if (path === '/' || path === '/deliveries') return <Deliveries place={props.place} />
  if (section === 'deliveries' && id) return <DeliveryPage id={id} />
  if (section === 'endpoints' && id) return <EndpointPage id={id} />
  if (section === 'endpoints') return <Endpoints place={props.place} />
  if (section === 'events' && id) return <EventPage id={id} />
  if (section === 'events') return <Events place={props.place} />
  if (section === 'event-types') return <EventTypes />
  if (section === 'clients' && id && can(SCOPES.clientsRead)) return <ClientPage id={id} />
  if (section === 'clients' && can(SCOPES.clientsRead)) return <Clients place={props.place} />
  if (section === 'scopes' && can(SCOPES.clientsRead)) return <Scopes place={props.place} />
  if (section === 'registration-tokens' && can(SCOPES.clientsWrite)) return <RegistrationTokens place={props.place} />
  if (section === 'settings' && can(SCOPES.settings)) return <SettingsPage />
  if (section === 'users' && can(SCOPES.sessions)) return <SubjectPage place={props.place} />
  return (
    <section>
      <h1>Page not found</h1>
      <Empty title={`The console has no page at ${path}.`}>
        <Link to="/">Go to the deliveries</Link>
      </Empty>
    </section>
  )
}

/** The header's sections: where each links, the paths under it (the event types are under Events), and the scope it needs. */
const SECTIONS: Array<{ title: string; to: string; covers: string; scope?: string }> = [
  { title: 'Deliveries', to: '/', covers: '/deliveries' },
  { title: 'Endpoints', to: '/endpoints', covers: '/endpoints' },
  { title: 'Events', to: '/events', covers: '/event' },
  { title: 'Clients', to: '/clients', covers: '/clients', scope: SCOPES.clientsRead },
  { title: 'Scopes', to: '/scopes', covers: '/scopes', scope: SCOPES.clientsRead },
  { title: 'Users', to: '/users', covers: '/users', scope: SCOPES.sessions },
  { title: 'Settings', to: '/settings', covers: '/settings', scope: SCOPES.settings },
]

/** The scopes the console can change something with; a token with none of them makes a read-only console. */
const WRITE_SCOPES = [SCOPES.webhooksWrite, SCOPES.publish, SCOPES.settings, SCOPES.clientsWrite, SCOPES.scopesWrite, SCOPES.keys, SCOPES.sessions]

/**
 * The sections, the account and Sign out. On a narrow screen the sections and the account fold behind a Menu button
 * (a disclosure: the button says whether it is open, the panel follows it); choosing a section, or Escape, folds it.
 */
function Header(props: { session: Session; path: string }) {
  const readOnly = !WRITE_SCOPES.some((scope) => can(scope))
  const [open, setOpen] = useState(false)
  const toggle = useRef<HTMLButtonElement>(null)
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !open) return
    setOpen(false)
    toggle.current?.focus()
  }
  const onChoice = (event: MouseEvent) => {
    if ((event.target as Element).closest('a')) setOpen(false)
  }
  return (
    <header class="top" onKeyDown={onKeyDown}>
      <span class="brand">Herald</span>
      <button type="button" class="secondary menu-toggle" ref={toggle} aria-expanded={open} aria-controls="console-menu" onClick={() => setOpen(!open)}>
        Menu
      </button>
      <div id="console-menu" class={open ? 'menu open' : 'menu'}>
        <nav aria-label="Console" onClick={onChoice}>
          {SECTIONS.filter((section) => !section.scope || can(section.scope)).map((section) => (
            <Link to={section.to} current={props.path === section.to || props.path.startsWith(section.covers)}>
              {section.title}
            </Link>
          ))}
        </nav>
        <div class="who">
          <span class="mono" title={`Client ${props.session.clientId}`}>
            {props.session.accountId}
          </span>
          {readOnly && (
            <span class="badge" title={[...props.session.scopes].join(' ')}>
              read-only
            </span>
          )}
        </div>
      </div>
      <button type="button" class="secondary sign-out" onClick={() => endSession('You signed out.')}>
        Sign out
      </button>
    </header>
  )
}

function App(props: { link?: SignInLink }) {
  const [session, setSession] = useState(currentSession)
  const [linking, setLinking] = useState(props.link !== undefined)
  const place = usePlace()
  useEffect(
    () =>
      onSessionChange(() => {
        const next = currentSession()
        if (next) rememberAccount(next.accountId)
        setSession(next)
      }),
    [],
  )
  useEffect(() => {
    if (!props.link) return
    void exchangeSignInLink(props.link).then((failure) => {
      if (failure !== undefined) setSignInNotice(failure)
      setLinking(false)
    })
  }, [])
  if (linking) {
    return (
      <main class="sign-in">
        <h1>Herald console</h1>
        <p role="status">Signing in with the link…</p>
      </main>
    )
  }
  // Signed out, the URL stays as it is: signing in again lands on the same page, filters and all.
  if (!session) return <SignIn accountId={props.link?.accountId} />
  return (
    <>
      <Header session={session} path={place.path} />
      <main>
        <Route place={place} />
      </main>
    </>
  )
}

// Before the first render: the link's code leaves the address bar (and the history) at once.
render(<App link={takeSignInLink()} />, document.getElementById('app')!)
