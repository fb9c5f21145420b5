/**
 * The inbox: conversations by status with their unread counts, and a thread beside the list (wide
 * screens) or on its own (phones). Both refresh when the workspace's events say something changed.
 */
import { useState } from "preact/hooks"
import type { ConversationSummary } from "../../../core/conversations/model.ts"
import { tool } from "../api.ts"
import { useWorkspaceEvents } from "../events.ts"
import { Link, match, useLocation } from "../router.tsx"
import { memberName, useSession } from "../session.ts"
import { Badge, Button, ErrorNote, Loading, Page, useAction, useLoad, When } from "../ui.tsx"
import { Thread } from "./thread.tsx"

interface ConversationPage {
  readonly conversations: ReadonlyArray<ConversationSummary>
  readonly nextCursor: string | null
}

type Status = "open" | "done"

const ConversationList = ({ status, selected }: { readonly status: Status; readonly selected: string | null }) => {
  const session = useSession()
  const list = useLoad(() => tool<ConversationPage>("conversations_list", { status, limit: 50 }), [status])
  const more = useAction()
  const [extra, setExtra] = useState<{ items: ReadonlyArray<ConversationSummary>; cursor: string | null } | null>(
    null
  )
  useWorkspaceEvents(() => void list.reload())

  const loadMore = async (cursor: string) => {
    const page = await more.run(() => tool<ConversationPage>("conversations_list", { status, limit: 50, cursor }))
    if (page !== undefined) {
      setExtra({ items: [...(extra?.items ?? []), ...page.conversations], cursor: page.nextCursor })
    }
  }

  if (list.data === undefined) {
    return list.error !== undefined ? <ErrorNote error={list.error} /> : <Loading what="conversations" />
  }
  const seen = new Set(list.data.conversations.map((c) => c.id))
  const items = [...list.data.conversations, ...(extra?.items ?? []).filter((c) => !seen.has(c.id))]
  const cursor = extra === null ? list.data.nextCursor : extra.cursor
  return (
    <>
      <ErrorNote error={list.error} />
      {items.length === 0
        ? (
          <p class="empty">
            {status === "open" ? "No open conversations. New texts and calls land here." : "Nothing marked done yet."}
          </p>
        )
        : (
          <ul class="conversations" aria-label={`${status === "open" ? "Open" : "Done"} conversations`}>
            {items.map((c) => {
              const assignee = memberName(session, c.assigneeUid)
              return (
                <li key={c.id}>
                  <Link
                    href={`/inbox/${c.id}${status === "done" ? "?status=done" : ""}`}
                    class={c.unread > 0 ? "conversation conversation-unread" : "conversation"}
                    aria-current={c.id === selected ? "page" : undefined}
                  >
                    <span class="conversation-top">
                      <span class="conversation-name">{c.contactName}</span>
                      <When at={c.lastActivityAt} />
                    </span>
                    <span class="conversation-preview">{c.preview ?? "No messages yet"}</span>
                    <span class="conversation-meta">
                      {c.unread > 0 && <Badge tone="warn">{c.unread} unread</Badge>}
                      {assignee !== null && <span class="muted">Assigned to {assignee}</span>}
                      {c.numberE164 !== null && <span class="muted">on {c.numberE164}</span>}
                    </span>
                  </Link>
                </li>
              )
            })}
          </ul>
        )}
      {cursor !== null && (
        <Button busy={more.busy} onClick={() => void loadMore(cursor)}>
          Load more
        </Button>
      )}
      <ErrorNote error={more.error} />
    </>
  )
}

const StatusTabs = ({ status }: { readonly status: Status }) => (
  <nav class="tabs" aria-label="Conversation status">
    <Link href="/inbox" aria-current={status === "open" ? "page" : undefined}>
      Open
    </Link>
    <Link href="/inbox?status=done" aria-current={status === "done" ? "page" : undefined}>
      Done
    </Link>
  </nav>
)

export const Inbox = () => {
  const { path, query } = useLocation()
  const status: Status = query.get("status") === "done" ? "done" : "open"
  const id = match("/inbox/:id", path)?.id ?? null
  if (id === null) {
    return (
      <Page title="Inbox">
        <StatusTabs status={status} />
        <ConversationList status={status} selected={null} />
      </Page>
    )
  }
  return (
    <div class="split">
      <aside class="split-list" aria-label="Conversations">
        <h2 class="split-title">Inbox</h2>
        <StatusTabs status={status} />
        <ConversationList status={status} selected={id} />
      </aside>
      <div class="split-detail">
        <Link href={status === "done" ? "/inbox?status=done" : "/inbox"} class="back">
          Back to the inbox
        </Link>
        <Thread id={id} />
      </div>
    </div>
  )
}
