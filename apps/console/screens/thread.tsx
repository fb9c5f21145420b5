/**
 * One conversation: its timeline oldest first (messages with media, calls with their recording,
 * transcript and summary, voicemails, internal notes, system lines), the reply box and the note box,
 * assignment, and marking it done or open. A long timeline shows its newest entries, and earlier ones
 * a page at a time on request.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type { CallDetails } from "../../../core/calls/model.ts"
import type { Activity, ConversationSummary } from "../../../core/conversations/model.ts"
import { tool } from "../api.ts"
import { useWorkspaceEvents } from "../events.ts"
import { memberName, type Session, useSession } from "../session.ts"
import { Badge, Button, duration, ErrorNote, Field, Loading, Page, Select, useAction, useLoad, When } from "../ui.tsx"

interface ThreadAnswer {
  readonly conversation: ConversationSummary
  readonly activities: ReadonlyArray<Activity>
}

/**
 * The newest entries a thread shows when it opens, and how many more each "Show earlier" adds: the
 * rest are kept out of the page, as laying out every entry of a thread of years delays its first
 * paint and the reply box by seconds.
 */
export const TIMELINE_PAGE = 50

type Media = Activity["media"][number]
type TranscriptEntry = NonNullable<Activity["callTranscript"]>[number]

const size = (bytes: number) =>
  bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1000))} kB`

/** Images inline, audio and video playable, anything else a link. */
const MediaItem = ({ media, label }: { readonly media: Media; readonly label: string }) => {
  if (media.url === null) return <p class="muted">{media.filename} (no longer available)</p>
  if (media.contentType.startsWith("image/")) {
    return (
      <a href={media.url} target="_blank" rel="noopener" class="media-image">
        <img src={media.url} alt={media.filename} loading="lazy" />
      </a>
    )
  }
  if (media.contentType.startsWith("audio/")) {
    return <audio controls preload="none" src={media.url} aria-label={label} />
  }
  if (media.contentType.startsWith("video/")) {
    return <video controls preload="none" src={media.url} aria-label={label} class="media-video" />
  }
  return (
    <a href={media.url} target="_blank" rel="noopener" download={media.filename}>
      {media.filename} ({media.contentType}, {size(media.size)})
    </a>
  )
}

const speakers: Record<TranscriptEntry["speaker"], string> = {
  agent: "AI agent",
  caller: "Caller",
  member: "Teammate",
  callee: "Callee"
}

const Transcript = ({ entries }: { readonly entries: ReadonlyArray<TranscriptEntry> }) => (
  <details class="transcript" open>
    <summary>Transcript</summary>
    <ol>
      {entries.map((t, i) => (
        <li key={i}>
          <span class="speaker">{speakers[t.speaker] ?? t.speaker}:</span> {t.text}
        </li>
      ))}
    </ol>
  </details>
)

const answeredBy = (s: Session, call: CallDetails): string | null => {
  if (call.forwardedTo !== null) return `Forwarded to ${call.forwardedTo}`
  if (call.answeredBy === "agent") return "Answered by the AI agent"
  if (call.answeredBy === "member") return `Answered by ${memberName(s, call.memberUid) ?? "a teammate"}`
  if (call.answeredBy === "callee") return "Answered by the person called"
  return null
}

const CallEntry = ({ activity, session }: { readonly activity: Activity; readonly session: Session }) => {
  const call = activity.call as CallDetails | null
  const voicemail = activity.type === "voicemail"
  const recordings = activity.media.filter((m) => m.contentType.startsWith("audio/"))
  const title = voicemail
    ? "Voicemail"
    : `${activity.direction === "outbound" ? "Outbound" : "Inbound"} call${call?.status === "missed" ? ", missed" : ""}`
  const answered = call === null ? null : answeredBy(session, call)
  return (
    <div class={voicemail ? "card act-card act-voicemail" : "card act-card"}>
      <p class="act-title">
        <strong>{title}</strong>
        {call !== null && call.durationSeconds > 0 && <span class="muted">{duration(call.durationSeconds)}</span>}
        <When at={activity.createdAt} />
      </p>
      {answered !== null && <p class="muted">{answered}</p>}
      {activity.body !== null && activity.body !== "" && <p>{activity.body}</p>}
      {recordings.map((m, i) => (
        <MediaItem key={i} media={m} label={voicemail ? "Voicemail recording" : "Call recording"} />
      ))}
      {call?.summary !== null && call?.summary !== undefined && (
        <div class="summary">
          <strong>Summary</strong>
          <p>{call.summary}</p>
        </div>
      )}
      {activity.callTranscript !== null && activity.callTranscript.length > 0 && (
        <Transcript entries={activity.callTranscript} />
      )}
    </div>
  )
}

const deliveryLabels: Record<string, string> = {
  queued: "Queued",
  sent: "Sent",
  delivered: "Delivered",
  failed: "Failed",
  received: "Received",
  simulated: "Simulated (test)"
}

const Entry = (
  { activity, session, contactName }: {
    readonly activity: Activity
    readonly session: Session
    readonly contactName: string
  }
) => {
  switch (activity.type) {
    case "message": {
      const inbound = activity.direction === "inbound"
      const who = inbound ? contactName : memberName(session, activity.authorUid) ?? "Sent through the API"
      return (
        <li class={inbound ? "act act-message act-in" : "act act-message act-out"}>
          <div class="bubble">
            {activity.body !== null && activity.body !== "" && <p class="body">{activity.body}</p>}
            {activity.media.map((m, i) => <MediaItem key={i} media={m} label={`Attachment ${m.filename}`} />)}
          </div>
          <p class="meta">
            {who} · <When at={activity.createdAt} />
            {!inbound && activity.deliveryStatus !== null && (
              <>
                {" "}·{" "}
                <span class={activity.deliveryStatus === "failed" ? "status-bad" : undefined}>
                  {deliveryLabels[activity.deliveryStatus] ?? activity.deliveryStatus}
                </span>
              </>
            )}
          </p>
        </li>
      )
    }
    case "call":
    case "voicemail":
      return (
        <li class="act act-call">
          <CallEntry activity={activity} session={session} />
        </li>
      )
    case "internal_note":
      return (
        <li class="act act-note">
          <p class="act-title">
            <strong>Internal note</strong>
            <span class="muted">{memberName(session, activity.authorUid) ?? "A teammate"}</span>
            <When at={activity.createdAt} />
          </p>
          <p class="body">{activity.body}</p>
        </li>
      )
    default:
      return (
        <li class="act act-system">
          <p>
            {activity.body} · <When at={activity.createdAt} />
          </p>
        </li>
      )
  }
}

const Composer = (
  { conversation, onDone }: { readonly conversation: ConversationSummary; readonly onDone: () => void }
) => {
  const session = useSession()
  const canText = session.tools.has("messages_send") && conversation.participants.length > 0
  const canNote = session.tools.has("notes_create")
  const [mode, setMode] = useState<"text" | "note">(canText ? "text" : "note")
  const [body, setBody] = useState("")
  const action = useAction()
  if (!canText && !canNote) return null
  const submit = async (e: Event) => {
    e.preventDefault()
    if (body.trim() === "") return
    const sent = await action.run(() =>
      mode === "text"
        ? tool("messages_send", { conversationId: conversation.id, body })
        : tool("notes_create", { conversationId: conversation.id, body })
    )
    if (sent !== undefined) {
      setBody("")
      onDone()
    }
  }
  return (
    <form class={mode === "note" ? "composer composer-note" : "composer"} onSubmit={submit}>
      <fieldset class="segmented">
        <legend class="sr-only">What to write</legend>
        <label class={mode === "text" ? "seg seg-on" : "seg"}>
          <input
            type="radio"
            name="mode"
            checked={mode === "text"}
            disabled={!canText}
            onChange={() => setMode("text")}
          />
          Text message
        </label>
        <label class={mode === "note" ? "seg seg-on" : "seg"}>
          <input
            type="radio"
            name="mode"
            checked={mode === "note"}
            disabled={!canNote}
            onChange={() => setMode("note")}
          />
          Internal note
        </label>
      </fieldset>
      {!canText && conversation.participants.length === 0 && (
        <p class="hint">This caller withheld their number: there is nobody to text back.</p>
      )}
      <Field
        label={mode === "text" ? `Reply to ${conversation.contactName}` : "Note for the team (never sent)"}
        multiline
        rows={3}
        value={body}
        onValue={setBody}
      />
      <ErrorNote error={action.error} />
      <Button kind="primary" type="submit" busy={action.busy} disabled={body.trim() === ""}>
        {mode === "text" ? "Send text" : "Add note"}
      </Button>
    </form>
  )
}

export const Thread = ({ id }: { readonly id: string }) => {
  const session = useSession()
  const thread = useLoad(() => tool<ThreadAnswer>("conversations_get", { id }), [id])
  const change = useAction()
  const end = useRef<HTMLDivElement>(null)
  // Per thread: another thread opens at its newest page again.
  const [shown, setShown] = useState({ id, count: TIMELINE_PAGE })
  const count = thread.data?.activities.length ?? 0
  // The newest entry in view when the thread opens and when one arrives.
  useEffect(() => {
    if (count > 0) end.current?.scrollIntoView({ block: "end" })
  }, [count, id])
  useWorkspaceEvents((events) => {
    if (events.some((e) => e.data["conversationId"] === undefined || e.data["conversationId"] === id)) {
      void thread.reload()
    }
  })

  if (thread.data === undefined) {
    return thread.error !== undefined
      ? (
        <Page title="Conversation">
          <ErrorNote error={thread.error} />
        </Page>
      )
      : <Loading what="the conversation" />
  }
  const { conversation, activities } = thread.data
  const setStatus = (status: "open" | "done") =>
    change.run(async () => {
      const { conversation: updated } = await tool<{ conversation: ConversationSummary }>("conversations_update", {
        id,
        status
      })
      thread.setData({ conversation: updated, activities })
    })
  const assign = (assigneeUid: string) =>
    change.run(async () => {
      const { conversation: updated } = await tool<{ conversation: ConversationSummary }>("conversations_assign", {
        id,
        assigneeUid: assigneeUid === "" ? null : assigneeUid
      })
      thread.setData({ conversation: updated, activities })
    })

  const limit = shown.id === id ? shown.count : TIMELINE_PAGE
  const hidden = Math.max(0, activities.length - limit)
  const subtitle = [conversation.participants[0], conversation.numberE164 && `on ${conversation.numberE164}`]
    .filter(Boolean)
    .join(" ")
  return (
    <Page
      title={conversation.contactName}
      actions={
        <>
          <Badge tone={conversation.status === "open" ? "info" : "ok"}>
            {conversation.status === "open" ? "Open" : "Done"}
          </Badge>
          {session.tools.has("conversations_update") && (
            <Button
              busy={change.busy}
              onClick={() => void setStatus(conversation.status === "open" ? "done" : "open")}
            >
              {conversation.status === "open" ? "Mark done" : "Reopen"}
            </Button>
          )}
        </>
      }
    >
      {subtitle !== "" && <p class="muted thread-sub">{subtitle}</p>}
      {session.tools.has("conversations_assign") && session.members.length > 0 && (
        <div class="assign">
          <Select
            label="Assigned to"
            value={conversation.assigneeUid ?? ""}
            onValue={(v) => void assign(v)}
            options={[
              ["", "Nobody"],
              ...session.members.map((m) => [m.id, m.id === session.me.member.id ? `${m.name} (you)` : m.name] as const)
            ]}
          />
        </div>
      )}
      <ErrorNote error={change.error} />
      <h2 class="sr-only">Timeline</h2>
      {activities.length === 0
        ? <p class="empty">Nothing in this conversation yet.</p>
        : (
          <>
            {hidden > 0 && (
              <Button
                class="timeline-earlier"
                onClick={() => setShown({ id, count: limit + TIMELINE_PAGE })}
              >
                Show {Math.min(hidden, TIMELINE_PAGE)} earlier ({hidden} not shown)
              </Button>
            )}
            <ol class="timeline" aria-label="Timeline, oldest first">
              {activities.slice(hidden).map((a) => (
                <Entry key={a.id} activity={a} session={session} contactName={conversation.contactName} />
              ))}
            </ol>
          </>
        )}
      <div ref={end} />
      <Composer conversation={conversation} onDone={() => void thread.reload()} />
    </Page>
  )
}
