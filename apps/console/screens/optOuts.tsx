/** Opt-outs: the phones the workspace must not text, from keywords, the carrier or recorded by hand. */
import { useState } from "preact/hooks"
import type { OptOut } from "../../../core/optouts/model.ts"
import { fieldErrors, formError, tool } from "../api.ts"
import { useSession } from "../session.ts"
import { Button, confirmed, ErrorNote, Field, Loading, Notice, Page, useAction, useLoad, When } from "../ui.tsx"

interface OptOutPage {
  readonly optOuts: ReadonlyArray<OptOut>
  readonly nextCursor: string | null
}

const sources: Record<OptOut["source"], string> = {
  keyword: "Texted a keyword",
  carrier: "Refused by the carrier",
  api: "Recorded by the team"
}

export const OptOuts = () => {
  const session = useSession()
  const [filter, setFilter] = useState("")
  const [phone, setPhone] = useState("")
  const list = useLoad(
    () => tool<OptOutPage>("opt_outs_list", filter === "" ? { limit: 200 } : { phone: filter, limit: 200 }),
    [filter]
  )
  const [search, setSearch] = useState("")
  const [note, setNote] = useState("")
  const [said, setSaid] = useState<string | null>(null)
  const add = useAction()
  const remove = useAction()
  const errors = fieldErrors(add.error, ["phone", "note"])

  const submit = async (e: Event) => {
    e.preventDefault()
    setSaid(null)
    const answer = await add.run(() =>
      tool<{ optOut: OptOut; created: boolean }>("opt_outs_create", {
        phone: phone.trim(),
        ...(note.trim() === "" ? {} : { note: note.trim() })
      })
    )
    if (answer !== undefined) {
      setSaid(
        answer.created ? `${answer.optOut.phone} will not be texted.` : `${answer.optOut.phone} had already opted out.`
      )
      setPhone("")
      setNote("")
      void list.reload()
    }
  }
  const del = async (o: OptOut) => {
    if (!confirmed(`Allow texting ${o.phone} again? Only do this when they asked to be texted again.`)) return
    setSaid(null)
    const done = await remove.run(() => tool("opt_outs_delete", { phone: o.phone }))
    if (done !== undefined) {
      setSaid(`${o.phone} can be texted again.`)
      void list.reload()
    }
  }

  return (
    <Page title="Opt-outs">
      <p>Nobody on this list is texted by the workspace: not by replies, broadcasts or the API.</p>
      {session.tools.has("opt_outs_create") && (
        <form class="form card" onSubmit={submit}>
          <h2>Record an opt-out</h2>
          <Field
            label="Phone number"
            type="tel"
            value={phone}
            onValue={setPhone}
            error={errors["phone"]}
            hint="In international form, e.g. +14155550123."
          />
          <Field label="Note (optional)" value={note} onValue={setNote} error={errors["note"]} />
          <ErrorNote error={formError(add.error, errors)} />
          <Button kind="primary" type="submit" busy={add.busy}>
            Add opt-out
          </Button>
        </form>
      )}
      <Notice>{said}</Notice>
      <ErrorNote error={remove.error} />
      <form
        role="search"
        class="search"
        onSubmit={(e) => {
          e.preventDefault()
          setFilter(search.trim())
        }}
      >
        <Field label="Find a phone number" type="search" value={search} onValue={setSearch} />
        <Button type="submit">Find</Button>
      </form>
      <ErrorNote error={list.error} />
      {list.data === undefined
        ? list.error === undefined && <Loading what="opt-outs" />
        : list.data.optOuts.length === 0
        ? <p class="empty">{filter === "" ? "Nobody has opted out." : `${filter} has not opted out.`}</p>
        : (
          <ul class="list" aria-label="Opt-outs">
            {list.data.optOuts.map((o) => (
              <li key={o.phone} class="list-item">
                <div>
                  <strong>{o.phone}</strong>
                  <span class="muted">
                    {" "}· {sources[o.source]}
                    {o.keyword !== null ? ` (${o.keyword})` : ""} · <When at={o.createdAt} />
                  </span>
                  {o.note !== null && <p class="muted">{o.note}</p>}
                </div>
                {session.tools.has("opt_outs_delete") && (
                  <Button
                    busy={remove.busy}
                    onClick={() => void del(o)}
                    aria-label={`Remove the opt-out of ${o.phone}`}
                  >
                    Remove
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
    </Page>
  )
}
