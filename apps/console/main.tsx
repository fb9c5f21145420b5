/**
 * The web console (CONTRACT "Members and the console"), served at /app by the same process as the
 * API. It signs in by email link, then works the workspace through `POST /v1/app/tools/<name>`.
 * Preact with hooks, bundled by esbuild (apps/server/build.mjs); why this stack: docs/features/console.md.
 */
import "./styles.css"
import type { ComponentChildren } from "preact"
import { render } from "preact"
import { useCallback, useEffect, useMemo, useState } from "preact/hooks"
import type { Member } from "../../core/members/model.ts"
import { api, ApiError, type Me, tool, whenSignedOut } from "./api.ts"
import { closeEvents } from "./events.ts"
import { Link, match, navigate, Redirect, useLocation } from "./router.tsx"
import { Agent } from "./screens/agent.tsx"
import { Contacts } from "./screens/contacts.tsx"
import { Developers } from "./screens/developers.tsx"
import { Inbox } from "./screens/inbox.tsx"
import { Numbers } from "./screens/numbers.tsx"
import { OptOuts } from "./screens/optOuts.tsx"
import { Registration } from "./screens/registration.tsx"
import { Scheduled } from "./screens/scheduled.tsx"
import { SignIn } from "./screens/signIn.tsx"
import { Workspaces } from "./screens/workspaces.tsx"
import { isAdmin, type Session, SessionContext } from "./session.ts"
import { Button, ErrorNote, Loading, Page } from "./ui.tsx"

interface Screen {
  readonly path: string
  readonly label: string
  /** Whether this member sees it: the server lists the tools it needs (and, for admin screens, the role allows it). */
  readonly shown: (s: Session) => boolean
}

const has = (s: Session, ...names: Array<string>) => names.some((n) => s.tools.has(n))

const screens: ReadonlyArray<Screen> = [
  { path: "/inbox", label: "Inbox", shown: (s) => has(s, "conversations_list") },
  { path: "/contacts", label: "Contacts", shown: (s) => has(s, "contacts_list") },
  {
    path: "/scheduled",
    label: "Scheduled & broadcasts",
    shown: (s) => has(s, "scheduled_messages_list", "broadcasts_list")
  },
  { path: "/numbers", label: "Numbers", shown: (s) => isAdmin(s) && has(s, "numbers_list") },
  { path: "/registration", label: "Texting registration", shown: (s) => isAdmin(s) && has(s, "messaging_status") },
  { path: "/agent", label: "AI agent", shown: (s) => isAdmin(s) && has(s, "agent_get") },
  { path: "/opt-outs", label: "Opt-outs", shown: (s) => isAdmin(s) && has(s, "opt_outs_list") },
  { path: "/developers", label: "Developer settings", shown: (s) => isAdmin(s) && has(s, "keys_list", "webhooks_list") }
]

/** The chosen-workspace mark: a member of several workspaces picks one once per browser session. */
const PICKED = "switchboard.workspacePicked"

const Route = ({ session }: { readonly session: Session }) => {
  const { path } = useLocation()
  const visible = screens.filter((s) => s.shown(session))
  if (path === "/" || path === "") {
    return <Redirect to={visible[0]?.path ?? "/workspaces"} />
  }
  if (match("/workspaces", path) !== null) return <Workspaces />
  const screen = visible.find((s) => path === s.path || path.startsWith(s.path + "/"))
  if (screen === undefined) {
    const exists = screens.some((s) => path === s.path || path.startsWith(s.path + "/"))
    return (
      <Page title={exists ? "Not available" : "Not found"}>
        <p>
          {exists
            ? "Your role in this workspace does not include this screen. Ask an admin or the owner."
            : "There is no such screen."} <Link href="/">Go to the start</Link>
        </p>
      </Page>
    )
  }
  switch (screen.path) {
    case "/inbox":
      return <Inbox />
    case "/contacts":
      return <Contacts />
    case "/scheduled":
      return <Scheduled />
    case "/numbers":
      return <Numbers />
    case "/registration":
      return <Registration />
    case "/agent":
      return <Agent />
    case "/opt-outs":
      return <OptOuts />
    default:
      return <Developers />
  }
}

const Shell = ({ session, children }: { readonly session: Session; readonly children: ComponentChildren }) => {
  const { path } = useLocation()
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [path])
  const { me } = session
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <div class="brand">
          <span class="brand-name">Switchboard</span>
          <span class="brand-workspace">{me.workspace.name}</span>
        </div>
        <Button
          class="menu-toggle"
          aria-expanded={menuOpen ? "true" : "false"}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </Button>
      </header>
      <nav id="nav" class={menuOpen ? "nav nav-open" : "nav"} aria-label="Console">
        <ul>
          {screens.filter((s) => s.shown(session)).map((s) => {
            const here = path === s.path || path.startsWith(s.path + "/")
            return (
              <li key={s.path}>
                <Link href={s.path} aria-current={here ? "page" : undefined}>
                  {s.label}
                </Link>
              </li>
            )
          })}
        </ul>
        <div class="nav-foot">
          <p class="muted">
            {me.member.name} <span class="role">({me.member.role})</span>
          </p>
          {me.workspaces.length > 1 && <Link href="/workspaces">Switch workspace</Link>}
          <Button onClick={session.signOut}>Sign out</Button>
        </div>
      </nav>
      <main id="main" class="main">
        {children}
      </main>
    </div>
  )
}

type State =
  | { readonly kind: "loading" }
  | { readonly kind: "signedOut" }
  | { readonly kind: "failed"; readonly error: unknown }
  | {
    readonly kind: "signedIn"
    readonly me: Me
    readonly tools: ReadonlyArray<{ name: string; scope: string }>
    readonly members: ReadonlyArray<Member>
  }

const App = () => {
  const [state, setState] = useState<State>({ kind: "loading" })

  const load = useCallback(async () => {
    try {
      const me = await api.me()
      const { tools } = await api.tools()
      const members = tools.some((t) => t.name === "members_list")
        ? (await tool<{ members: ReadonlyArray<Member> }>("members_list")).members
        : []
      setState({ kind: "signedIn", me, tools, members })
      if (me.workspaces.length > 1 && sessionStorage.getItem(PICKED) === null) navigate("/workspaces", true)
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        closeEvents()
        setState({ kind: "signedOut" })
      } else setState({ kind: "failed", error: e })
    }
  }, [])

  useEffect(() => {
    whenSignedOut(() => {
      closeEvents()
      setState({ kind: "signedOut" })
    })
    void load()
  }, [load])

  const session = useMemo<Session | null>(() => {
    if (state.kind !== "signedIn") return null
    return {
      me: state.me,
      tools: new Set(state.tools.map((t) => t.name)),
      scopes: [...new Set(state.tools.map((t) => t.scope))].sort(),
      members: state.members,
      refresh: async () => {
        // Another workspace: its own stream of events.
        closeEvents()
        sessionStorage.setItem(PICKED, "1")
        await load()
      },
      signOut: async () => {
        await api.signOut().catch(() => undefined)
        closeEvents()
        sessionStorage.removeItem(PICKED)
        setState({ kind: "signedOut" })
        navigate("/", true)
      }
    }
  }, [state, load])

  if (state.kind === "loading") {
    return (
      <main class="main main-center">
        <Loading what="the console" />
      </main>
    )
  }
  if (state.kind === "signedOut") return <SignIn />
  if (state.kind === "failed") {
    return (
      <main class="main main-center">
        <h1>The console could not start</h1>
        <ErrorNote error={state.error} />
        <Button kind="primary" onClick={() => void load()}>
          Try again
        </Button>
      </main>
    )
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session!}>
        <Route session={session!} />
      </Shell>
    </SessionContext.Provider>
  )
}

const root = document.getElementById("root")!
// The boot line index.html shows until the script runs.
root.textContent = ""
render(<App />, root)
