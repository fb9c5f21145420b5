/** Scheduled messages and broadcasts: what is due to go out, creating one, and canceling what has not been sent. */
import { useState } from "preact/hooks"
import type { Broadcast, ScheduledMessage } from "../../../core/scheduling/model.ts"
import { fieldErrors, formError, tool } from "../api.ts"
import { useSession } from "../session.ts"
import { Badge, Button, confirmed, ErrorNote, Field, Loading, Notice, Page, useAction, useLoad, When } from "../ui.tsx"

/** A `datetime-local` value (the browser's time zone) as an ISO instant; empty stays empty. */
const instant = (local: string) => (local === "" ? "" : new Date(local).toISOString())

const list = (text: string) => text.split(/[\n,]/).map((s) => s.trim()).filter((s) => s !== "")

const tones = {
  scheduled: "info",
  sending: "warn",
  sent: "ok",
  completed: "ok",
  failed: "bad",
  canceled: "info"
} as const

const ScheduledMessages = () => {
  const session = useSession()
  const items = useLoad(
    () => tool<{ scheduledMessages: ReadonlyArray<ScheduledMessage> }>("scheduled_messages_list", { limit: 100 }),
    []
  )
  const [to, setTo] = useState("")
  const [body, setBody] = useState("")
  const [sendAt, setSendAt] = useState("")
  const [said, setSaid] = useState<string | null>(null)
  const create = useAction()
  const cancel = useAction()
  const errors = fieldErrors(create.error, ["to", "body", "sendAt"])
  const submit = async (e: Event) => {
    e.preventDefault()
    setSaid(null)
    const answer = await create.run(() =>
      tool("scheduled_messages_create", { to: to.trim(), body, sendAt: instant(sendAt) })
    )
    if (answer !== undefined) {
      setSaid("Scheduled.")
      setTo("")
      setBody("")
      setSendAt("")
      void items.reload()
    }
  }
  const stop = async (m: ScheduledMessage) => {
    if (!confirmed(`Cancel the message to ${m.to}?`)) return
    const done = await cancel.run(() => tool("scheduled_messages_cancel", { id: m.id }))
    if (done !== undefined) void items.reload()
  }
  const rows = items.data?.scheduledMessages ?? []
  return (
    <section aria-labelledby="scheduled-title" class="block">
      <h2 id="scheduled-title">Scheduled messages</h2>
      {session.tools.has("scheduled_messages_create") && (
        <form class="form card" onSubmit={submit}>
          <h3>Schedule a text</h3>
          <Field
            label="To"
            type="tel"
            hint="In international form, e.g. +14155550123."
            value={to}
            onValue={setTo}
            error={errors["to"]}
          />
          <Field label="Message" multiline value={body} onValue={setBody} error={errors["body"]} />
          <Field
            label="Send at"
            type="datetime-local"
            value={sendAt}
            onValue={setSendAt}
            error={errors["sendAt"]}
            hint="In your time zone."
          />
          <ErrorNote error={formError(create.error, errors)} />
          <Notice>{said}</Notice>
          <Button kind="primary" type="submit" busy={create.busy}>
            Schedule
          </Button>
        </form>
      )}
      <ErrorNote error={items.error ?? cancel.error} />
      {items.data === undefined
        ? items.error === undefined && <Loading what="scheduled messages" />
        : rows.length === 0
        ? <p class="empty">Nothing scheduled.</p>
        : (
          <ul class="list" aria-label="Scheduled messages">
            {rows.map((m) => (
              <li key={m.id} class="list-item">
                <div>
                  <strong>{m.to}</strong> <Badge tone={tones[m.status]}>{m.status}</Badge>
                  <p class="muted">
                    <When at={m.sendAt} /> · {m.body}
                  </p>
                  {m.failure !== null && <p class="status-bad">{m.failure.message}</p>}
                </div>
                {m.status === "scheduled" && session.tools.has("scheduled_messages_cancel") && (
                  <Button
                    busy={cancel.busy}
                    onClick={() => void stop(m)}
                    aria-label={`Cancel the message to ${m.to}`}
                  >
                    Cancel
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
    </section>
  )
}

const Broadcasts = () => {
  const session = useSession()
  const items = useLoad(() => tool<{ broadcasts: ReadonlyArray<Broadcast> }>("broadcasts_list", { limit: 100 }), [])
  const [body, setBody] = useState("")
  const [phones, setPhones] = useState("")
  const [tags, setTags] = useState("")
  const [sendAt, setSendAt] = useState("")
  const [said, setSaid] = useState<string | null>(null)
  const create = useAction()
  const cancel = useAction()
  const errors = fieldErrors(create.error, ["body", "recipients", "sendAt"])
  const submit = async (e: Event) => {
    e.preventDefault()
    setSaid(null)
    const recipients = {
      ...(list(phones).length > 0 ? { phones: list(phones) } : {}),
      ...(list(tags).length > 0 ? { tags: list(tags) } : {})
    }
    const answer = await create.run(() =>
      tool("broadcasts_create", { body, recipients, ...(sendAt === "" ? {} : { sendAt: instant(sendAt) }) })
    )
    if (answer !== undefined) {
      setSaid(sendAt === "" ? "Broadcast started." : "Broadcast scheduled.")
      setBody("")
      setPhones("")
      setTags("")
      setSendAt("")
      void items.reload()
    }
  }
  const stop = async (b: Broadcast) => {
    if (!confirmed("Cancel this broadcast? Recipients not texted yet will not be.")) return
    const done = await cancel.run(() => tool("broadcasts_cancel", { id: b.id }))
    if (done !== undefined) void items.reload()
  }
  const rows = items.data?.broadcasts ?? []
  return (
    <section aria-labelledby="broadcasts-title" class="block">
      <h2 id="broadcasts-title">Broadcasts</h2>
      {session.tools.has("broadcasts_create") && (
        <form class="form card" onSubmit={submit}>
          <h3>New broadcast</h3>
          <Field label="Message" multiline value={body} onValue={setBody} error={errors["body"]} />
          <Field
            label="Phone numbers"
            multiline
            hint="One per line or separated by commas. Opted-out numbers are skipped."
            value={phones}
            onValue={setPhones}
            error={errors["recipients"]}
          />
          <Field label="Contacts tagged" hint="Tags separated by commas." value={tags} onValue={setTags} />
          <Field
            label="Send at (optional)"
            type="datetime-local"
            hint="Empty: now."
            value={sendAt}
            onValue={setSendAt}
            error={errors["sendAt"]}
          />
          <ErrorNote error={formError(create.error, errors)} />
          <Notice>{said}</Notice>
          <Button kind="primary" type="submit" busy={create.busy}>
            Create broadcast
          </Button>
        </form>
      )}
      <ErrorNote error={items.error ?? cancel.error} />
      {items.data === undefined
        ? items.error === undefined && <Loading what="broadcasts" />
        : rows.length === 0
        ? <p class="empty">No broadcasts yet.</p>
        : (
          <ul class="list" aria-label="Broadcasts">
            {rows.map((b) => (
              <li key={b.id} class="list-item">
                <div>
                  <Badge tone={tones[b.status]}>{b.status}</Badge> <When at={b.sendAt} />
                  <p>{b.body}</p>
                  <p class="muted">
                    {b.counts.sent} of {b.counts.total} sent · {b.counts.failed} failed · {b.counts.skippedOptedOut}
                    {" "}
                    opted out · {b.counts.pending} pending
                  </p>
                </div>
                {(b.status === "scheduled" || b.status === "sending") && session.tools.has("broadcasts_cancel") && (
                  <Button busy={cancel.busy} onClick={() => void stop(b)} aria-label="Cancel this broadcast">
                    Cancel
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
    </section>
  )
}

export const Scheduled = () => {
  const session = useSession()
  return (
    <Page title="Scheduled & broadcasts">
      {session.tools.has("scheduled_messages_list") && <ScheduledMessages />}
      {session.tools.has("broadcasts_list") && <Broadcasts />}
    </Page>
  )
}
