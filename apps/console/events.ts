/**
 * The workspace's events as they happen (`GET /v1/app/events`, Server-Sent Events): one stream for
 * the whole console, which screens subscribe to so new texts and calls appear without a reload.
 * EventSource reconnects by itself when the stream drops.
 */
import { useEffect, useRef } from "preact/hooks"

/** An event as the stream sends it: `event: <type>`, `data: {id, type, createdAt, data}`. */
export interface WorkspaceEvent {
  readonly type: string
  readonly data: Record<string, unknown>
}

/** The types the console refreshes on (CONTRACT "Members and the console"). */
const refreshing = (type: string) =>
  type.startsWith("message.") || type.startsWith("call.") || type.startsWith("conversation.") ||
  type.startsWith("contact.")

const TYPES = [
  "message.received",
  "message.delivered",
  "message.failed",
  "call.ringing",
  "call.answered",
  "call.forwarded",
  "call.completed",
  "call.missed",
  "call.recording.completed",
  "call.voicemail.completed",
  "call.transcript.completed",
  "call.summary.completed",
  "conversation.updated",
  "conversation.assigned",
  "contact.updated",
  "contact.deleted"
]

type Listener = (event: WorkspaceEvent) => void
const listeners = new Set<Listener>()
let source: EventSource | null = null

const dispatch = (type: string, raw: string) => {
  if (!refreshing(type)) return
  let data: Record<string, unknown> = {}
  try {
    const parsed = JSON.parse(raw)
    // The stream wraps the webhook payload's `data`; accept either shape.
    data = parsed?.data !== undefined && typeof parsed.data === "object" ? parsed.data : parsed ?? {}
  } catch {
    // An unreadable event still means something changed.
  }
  listeners.forEach((l) => l({ type, data }))
}

/** Opens the stream once a screen listens; closed on sign-out. */
const open = () => {
  if (source !== null || typeof EventSource === "undefined") return
  source = new EventSource("/v1/app/events")
  for (const type of TYPES) source.addEventListener(type, (e) => dispatch(type, (e as MessageEvent).data))
  // Events without a named type (or types added later) arrive as `message`.
  source.onmessage = (e) => {
    try {
      const parsed = JSON.parse(e.data)
      if (typeof parsed?.type === "string") dispatch(parsed.type, e.data)
    } catch {
      // ignored: not an event
    }
  }
}

export const closeEvents = () => {
  source?.close()
  source = null
}

/**
 * Calls `onEvent` for each refreshing event, coalesced: a burst (a call's several events) runs it
 * once, a moment after the last one.
 */
export const useWorkspaceEvents = (onEvent: (events: ReadonlyArray<WorkspaceEvent>) => void) => {
  const latest = useRef(onEvent)
  latest.current = onEvent
  useEffect(() => {
    open()
    let pending: Array<WorkspaceEvent> = []
    let timer: ReturnType<typeof setTimeout> | undefined
    const listener: Listener = (event) => {
      pending.push(event)
      clearTimeout(timer)
      timer = setTimeout(() => {
        const batch = pending
        pending = []
        latest.current(batch)
      }, 150)
    }
    listeners.add(listener)
    return () => {
      clearTimeout(timer)
      listeners.delete(listener)
    }
  }, [])
}
