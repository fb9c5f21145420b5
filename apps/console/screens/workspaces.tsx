/** The workspace picker, for a member of several workspaces: the session then acts in the one picked. */
import { api } from "../api.ts"
import { navigate } from "../router.tsx"
import { useSession } from "../session.ts"
import { Button, ErrorNote, Page, useAction } from "../ui.tsx"

export const Workspaces = () => {
  const session = useSession()
  const action = useAction()
  const pick = async (id: string) => {
    const done = await action.run(() => api.switchWorkspace(id))
    if (done === undefined) return
    await session.refresh()
    navigate("/", true)
  }
  return (
    <Page title="Choose a workspace">
      <p>You are a member of several workspaces. Pick the one to work in; you can switch later from the menu.</p>
      <ErrorNote error={action.error} />
      <ul class="list">
        {session.me.workspaces.map((w) => (
          <li key={w.id} class="list-item">
            <div>
              <strong>{w.name}</strong>
              <span class="muted">
                {" "}· {w.role}
                {w.id === session.me.workspace.id ? " · current" : ""}
              </span>
            </div>
            <Button kind="primary" busy={action.busy} onClick={() => void pick(w.id)} aria-label={`Open ${w.name}`}>
              Open
            </Button>
          </li>
        ))}
      </ul>
    </Page>
  )
}
