/**
 * Developer settings: API keys (created with a kind and scopes, the token shown once, revoked) and
 * webhook endpoints (created, edited, their secret rotated, tested, and their delivery log with resend).
 */
import { useState } from "preact/hooks"
import type { SubscribableEvent } from "../../../core/events/subscribable.ts"
import type { Delivery, WebhookEndpoint } from "../../../core/webhooks/model.ts"
import type { CreatedKey } from "../../../core/workspaces/keys.ts"
import type { ApiKey } from "../../../core/workspaces/model.ts"
import { fieldErrors, formError, tool } from "../api.ts"
import { Link, match, navigate, useLocation } from "../router.tsx"
import { useSession } from "../session.ts"
import {
  Badge,
  Button,
  Checkbox,
  confirmed,
  CopyButton,
  ErrorNote,
  Field,
  Loading,
  Notice,
  Page,
  Select,
  useAction,
  useLoad,
  When
} from "../ui.tsx"

/** A secret shown once: selectable, with a copy button, and said plainly that it will not be shown again. */
const OnceSecret = (
  { what, value, onDone }: { readonly what: string; readonly value: string; readonly onDone: () => void }
) => (
  <div class="note note-ok secret" role="status">
    <p>
      <strong>Your new {what}.</strong> Copy it now: it is not shown again.
    </p>
    <code class="secret-value" aria-label={`The new ${what}`}>
      {value}
    </code>
    <div class="actions">
      <CopyButton text={value} label={`Copy the ${what}`} />
      <Button onClick={onDone}>Done</Button>
    </div>
  </div>
)

const Keys = () => {
  const session = useSession()
  const keys = useLoad(() => tool<{ keys: ReadonlyArray<ApiKey> }>("keys_list"), [])
  const [kind, setKind] = useState<"live" | "test">("test")
  const [name, setName] = useState("")
  const [scopes, setScopes] = useState<ReadonlySet<string>>(() => new Set(session.scopes))
  const [created, setCreated] = useState<CreatedKey | null>(null)
  const create = useAction()
  const revoke = useAction()
  const errors = fieldErrors(create.error, ["kind", "name", "scopes"])

  const submit = async (e: Event) => {
    e.preventDefault()
    const answer = await create.run(() =>
      tool<{ key: CreatedKey }>("keys_create", {
        kind,
        scopes: [...scopes],
        ...(name.trim() === "" ? {} : { name: name.trim() })
      })
    )
    if (answer !== undefined) {
      setCreated(answer.key)
      setName("")
      void keys.reload()
    }
  }
  const revokeKey = async (k: ApiKey) => {
    if (!confirmed(`Revoke ${k.name ?? "this key"}? Anything using it stops working at once.`)) return
    const done = await revoke.run(() => tool("keys_revoke", { id: k.id }))
    if (done !== undefined) void keys.reload()
  }

  return (
    <section aria-labelledby="keys-title" class="block">
      <h2 id="keys-title">API keys</h2>
      <p>
        Keys authenticate the REST API (<code>/v1/api</code>) and MCP (<code>/v1/mcp</code>). Test keys simulate sends
        and purchases.
      </p>
      {created !== null && <OnceSecret what="API key" value={created.token} onDone={() => setCreated(null)} />}
      {session.tools.has("keys_create") && (
        <form class="form card" onSubmit={submit}>
          <h3>Create a key</h3>
          <Select
            label="Kind"
            value={kind}
            onValue={(v) => setKind(v as "live" | "test")}
            options={[["test", "Test (nothing sent or charged)"], ["live", "Live"]]}
            error={errors["kind"]}
          />
          <Field
            label="Name (optional)"
            value={name}
            onValue={setName}
            error={errors["name"]}
            hint="What uses it, e.g. CRM sync."
          />
          <fieldset>
            <legend>Scopes</legend>
            <div class="scopes">
              {session.scopes.map((s) => (
                <Checkbox
                  key={s}
                  label={s}
                  checked={scopes.has(s)}
                  onChecked={(on) => {
                    const next = new Set(scopes)
                    if (on) next.add(s)
                    else next.delete(s)
                    setScopes(next)
                  }}
                />
              ))}
            </div>
            {errors["scopes"] !== undefined && <p class="field-error">{errors["scopes"]}</p>}
          </fieldset>
          <ErrorNote error={formError(create.error, errors)} />
          <Button kind="primary" type="submit" busy={create.busy} disabled={scopes.size === 0}>
            Create key
          </Button>
        </form>
      )}
      <ErrorNote error={keys.error ?? revoke.error} />
      {keys.data === undefined
        ? keys.error === undefined && <Loading what="keys" />
        : keys.data.keys.length === 0
        ? <p class="empty">No keys yet.</p>
        : (
          <ul class="list" aria-label="API keys">
            {keys.data.keys.map((k) => (
              <li key={k.id} class="list-item">
                <div>
                  <strong>{k.name ?? "Unnamed key"}</strong>{" "}
                  <Badge tone={k.kind === "live" ? "warn" : "info"}>{k.kind}</Badge>{" "}
                  {k.revokedAt !== null && <Badge tone="bad">revoked</Badge>}
                  <p class="muted">
                    Created <When at={k.createdAt} /> ·{" "}
                    {k.scopes.length === session.scopes.length ? "all scopes" : k.scopes.join(", ")}
                  </p>
                </div>
                {k.revokedAt === null && session.tools.has("keys_revoke") && (
                  <Button
                    kind="danger"
                    busy={revoke.busy}
                    onClick={() => void revokeKey(k)}
                    aria-label={`Revoke ${k.name ?? "the unnamed key"}`}
                  >
                    Revoke
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
    </section>
  )
}

/** Every event type, or some picked from the catalog (`webhooks_event_types`). */
const EventPicker = (
  { value, onValue, error }: {
    readonly value: ReadonlyArray<string>
    readonly onValue: (events: ReadonlyArray<string>) => void
    readonly error?: string | undefined
  }
) => {
  const catalog = useLoad(() => tool<{ events: ReadonlyArray<SubscribableEvent> }>("webhooks_event_types"), [])
  const all = value.includes("*")
  return (
    <fieldset>
      <legend>Events</legend>
      <Checkbox
        label="Every event, including types added later"
        checked={all}
        onChecked={(on) => onValue(on ? ["*"] : [])}
      />
      {!all && (
        <div class="scopes">
          {(catalog.data?.events ?? []).map((e) => (
            <Checkbox
              key={e.type}
              label={e.type}
              checked={value.includes(e.type)}
              onChecked={(on) => onValue(on ? [...value, e.type] : value.filter((t) => t !== e.type))}
            />
          ))}
        </div>
      )}
      {error !== undefined && <p class="field-error">{error}</p>}
    </fieldset>
  )
}

const Webhooks = () => {
  const session = useSession()
  const hooks = useLoad(() => tool<{ webhooks: ReadonlyArray<WebhookEndpoint> }>("webhooks_list"), [])
  const [url, setUrl] = useState("")
  const [label, setLabel] = useState("")
  const [events, setEvents] = useState<ReadonlyArray<string>>(["*"])
  const [secret, setSecret] = useState<string | null>(null)
  const create = useAction()
  const errors = fieldErrors(create.error, ["url", "events", "label"])
  const submit = async (e: Event) => {
    e.preventDefault()
    const answer = await create.run(() =>
      tool<{ webhook: WebhookEndpoint & { secret: string } }>("webhooks_create", {
        url: url.trim(),
        events,
        ...(label.trim() === "" ? {} : { label: label.trim() })
      })
    )
    if (answer !== undefined) {
      setSecret(answer.webhook.secret)
      setUrl("")
      setLabel("")
      void hooks.reload()
    }
  }
  return (
    <section aria-labelledby="webhooks-title" class="block">
      <h2 id="webhooks-title">Webhook endpoints</h2>
      <p>Each endpoint receives the workspace's events, signed with its secret (Standard Webhooks).</p>
      {secret !== null && <OnceSecret what="signing secret" value={secret} onDone={() => setSecret(null)} />}
      {session.tools.has("webhooks_create") && (
        <form class="form card" onSubmit={submit}>
          <h3>Add an endpoint</h3>
          <Field label="URL" type="url" placeholder="https://" value={url} onValue={setUrl} error={errors["url"]} />
          <Field label="Label (optional)" value={label} onValue={setLabel} error={errors["label"]} />
          <EventPicker value={events} onValue={setEvents} error={errors["events"]} />
          <ErrorNote error={formError(create.error, errors)} />
          <Button kind="primary" type="submit" busy={create.busy} disabled={events.length === 0}>
            Add endpoint
          </Button>
        </form>
      )}
      <ErrorNote error={hooks.error} />
      {hooks.data === undefined
        ? hooks.error === undefined && <Loading what="webhook endpoints" />
        : hooks.data.webhooks.length === 0
        ? <p class="empty">No endpoints yet.</p>
        : (
          <ul class="list" aria-label="Webhook endpoints">
            {hooks.data.webhooks.map((w) => (
              <li key={w.id} class="list-item">
                <div>
                  <Link href={`/developers/webhooks/${w.id}`}>{w.label ?? w.url}</Link>{" "}
                  <Badge tone={w.status === "enabled" ? "ok" : "warn"}>{w.status}</Badge>
                  <p class="muted wrap">
                    {w.label !== null ? `${w.url} · ` : ""}
                    {w.events.includes("*") ? "every event" : w.events.join(", ")}
                  </p>
                </div>
              </li>
            ))}
          </ul>
        )}
    </section>
  )
}

const deliveryTone = { succeeded: "ok", failed: "bad", pending: "warn" } as const

const Deliveries = ({ id }: { readonly id: string }) => {
  const session = useSession()
  const log = useLoad(() => tool<{ deliveries: ReadonlyArray<Delivery> }>("webhooks_deliveries", { id, limit: 50 }), [
    id
  ])
  const resend = useAction()
  const [said, setSaid] = useState<string | null>(null)
  const again = async (d: Delivery) => {
    setSaid(null)
    const answer = await resend.run(() =>
      tool<{ delivery: Delivery }>("webhooks_deliveries_retry", { id, deliveryId: d.id })
    )
    if (answer !== undefined) {
      setSaid(
        `Resent ${d.eventType}: ${answer.delivery.status}${
          answer.delivery.responseStatus !== null ? ` (${answer.delivery.responseStatus})` : ""
        }.`
      )
      void log.reload()
    }
  }
  return (
    <section aria-labelledby="deliveries-title" class="block">
      <div class="row">
        <h2 id="deliveries-title">Delivery log</h2>
        <Button onClick={() => void log.reload()} busy={log.loading}>
          Refresh
        </Button>
      </div>
      <Notice>{said}</Notice>
      <ErrorNote error={log.error ?? resend.error} />
      {log.data === undefined
        ? log.error === undefined && <Loading what="deliveries" />
        : log.data.deliveries.length === 0
        ? <p class="empty">Nothing delivered yet.</p>
        : (
          // Scrolls sideways on a phone: focusable, so a keyboard can scroll it too.
          <div class="table-wrap" role="region" aria-label="Delivery log" tabIndex={0}>
            <table class="table">
              <caption class="sr-only">Deliveries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Answer</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last attempt</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {log.data.deliveries.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <code>{d.eventType}</code>
                    </td>
                    <td>
                      <Badge tone={deliveryTone[d.status]}>{d.status}</Badge>
                    </td>
                    <td>{d.responseStatus ?? d.error ?? "–"}</td>
                    <td>{d.attempts}</td>
                    <td>
                      <When at={d.lastAttemptAt ?? d.createdAt} />
                    </td>
                    <td>
                      {session.tools.has("webhooks_deliveries_retry") && (
                        <Button
                          busy={resend.busy}
                          onClick={() => void again(d)}
                          aria-label={`Resend ${d.eventType} (${d.eventId})`}
                        >
                          Resend
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
    </section>
  )
}

const WebhookScreen = ({ id }: { readonly id: string }) => {
  const session = useSession()
  const hook = useLoad(() => tool<{ webhook: WebhookEndpoint }>("webhooks_get", { id }), [id])
  const [draft, setDraft] = useState<
    { url: string; label: string; status: string; events: ReadonlyArray<string> } | null
  >(null)
  const [secret, setSecret] = useState<string | null>(null)
  const [said, setSaid] = useState<string | null>(null)
  const save = useAction()
  const other = useAction()
  const errors = fieldErrors(save.error, ["url", "label", "events", "status"])
  const w = hook.data?.webhook
  const form = draft ??
    (w === undefined ? null : { url: w.url, label: w.label ?? "", status: w.status, events: w.events })
  const [logKey, setLogKey] = useState(0)

  if (w === undefined || form === null) {
    return (
      <Page title="Webhook endpoint">
        {hook.error !== undefined ? <ErrorNote error={hook.error} /> : <Loading what="the endpoint" />}
      </Page>
    )
  }
  const submit = async (e: Event) => {
    e.preventDefault()
    setSaid(null)
    const answer = await save.run(() =>
      tool<{ webhook: WebhookEndpoint }>("webhooks_update", {
        id,
        url: form.url.trim(),
        label: form.label.trim() === "" ? null : form.label.trim(),
        status: form.status,
        events: form.events
      })
    )
    if (answer !== undefined) {
      hook.setData(answer)
      setDraft(null)
      setSaid("Saved.")
    }
  }
  const rotate = async () => {
    if (!confirmed("Rotate the signing secret? The old one keeps signing beside the new one for 24 hours.")) return
    setSaid(null)
    const answer = await other.run(() => tool<{ webhook: { secret: string } }>("webhooks_rotate", { id }))
    if (answer !== undefined) setSecret(answer.webhook.secret)
  }
  const test = async () => {
    setSaid(null)
    const answer = await other.run(() => tool<{ delivery: Delivery }>("webhooks_test", { id }))
    if (answer !== undefined) {
      const d = answer.delivery
      setSaid(
        `Test ping ${d.status}${
          d.responseStatus !== null
            ? `: the endpoint answered ${d.responseStatus}`
            : d.error !== null
            ? `: ${d.error}`
            : ""
        }.`
      )
      setLogKey(logKey + 1)
    }
  }
  const remove = async () => {
    if (!confirmed("Delete this endpoint and its delivery log?")) return
    const done = await other.run(() => tool("webhooks_delete", { id }))
    if (done !== undefined) navigate("/developers", true)
  }
  const set = (patch: Partial<typeof form>) => {
    setSaid(null)
    setDraft({ ...form, ...patch })
  }
  return (
    <Page title={w.label ?? "Webhook endpoint"}>
      <Link href="/developers" class="back">
        Developer settings
      </Link>
      {secret !== null && <OnceSecret what="signing secret" value={secret} onDone={() => setSecret(null)} />}
      <div class="actions">
        {session.tools.has("webhooks_test") && (
          <Button busy={other.busy} onClick={() => void test()}>
            Send a test ping
          </Button>
        )}
        {session.tools.has("webhooks_rotate") && (
          <Button busy={other.busy} onClick={() => void rotate()}>
            Rotate secret
          </Button>
        )}
        {session.tools.has("webhooks_delete") && (
          <Button kind="danger" busy={other.busy} onClick={() => void remove()}>
            Delete endpoint
          </Button>
        )}
      </div>
      <Notice>{said}</Notice>
      <ErrorNote error={other.error} />
      {session.tools.has("webhooks_update") && (
        <form class="form card" onSubmit={submit}>
          <h2>Settings</h2>
          <Field label="URL" type="url" value={form.url} onValue={(url) => set({ url })} error={errors["url"]} />
          <Field label="Label" value={form.label} onValue={(label) => set({ label })} error={errors["label"]} />
          <Select
            label="Status"
            value={form.status}
            onValue={(status) => set({ status })}
            options={[["enabled", "Enabled: events are delivered"], ["disabled", "Disabled: nothing is sent"]]}
            error={errors["status"]}
          />
          <EventPicker value={form.events} onValue={(events) => set({ events })} error={errors["events"]} />
          <ErrorNote error={formError(save.error, errors)} />
          <Button kind="primary" type="submit" busy={save.busy} disabled={draft === null}>
            Save changes
          </Button>
        </form>
      )}
      {session.tools.has("webhooks_deliveries") && <Deliveries key={logKey} id={id} />}
    </Page>
  )
}

export const Developers = () => {
  const session = useSession()
  const { path } = useLocation()
  const id = match("/developers/webhooks/:id", path)?.id
  if (id !== undefined) return <WebhookScreen id={id} />
  return (
    <Page title="Developer settings">
      {session.tools.has("keys_list") && <Keys />}
      {session.tools.has("webhooks_list") && <Webhooks />}
    </Page>
  )
}
