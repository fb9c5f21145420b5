/** The workspace's numbers and where each one's calls go (SPEC "Number `voiceMode`"). */
import { useState } from "preact/hooks"
import type { WorkspaceNumber } from "../../../core/numbers/model.ts"
import { fieldErrors, formError, tool } from "../api.ts"
import { Link } from "../router.tsx"
import { useSession } from "../session.ts"
import { Badge, Button, ErrorNote, Field, Loading, Notice, Page, Select, useAction, useLoad } from "../ui.tsx"

type Mode = WorkspaceNumber["voiceMode"]

const modes: ReadonlyArray<readonly [Mode, string]> = [
  ["app", "The team (rings every member with a phone)"],
  ["agent", "The AI agent"],
  ["voicemail", "Voicemail"],
  ["forward", "Another phone number"]
]

const Routing = ({ number, onChanged }: { readonly number: WorkspaceNumber; readonly onChanged: () => void }) => {
  const session = useSession()
  const [mode, setMode] = useState<Mode>(number.voiceMode)
  const [forwardTo, setForwardTo] = useState(number.forwardTo ?? "")
  const [done, setDone] = useState<string | null>(null)
  const save = useAction()
  const errors = fieldErrors(save.error, ["forwardTo"])
  const mayRoute = session.tools.has("numbers_connect") && session.tools.has("numbers_disconnect")

  const submit = async (e: Event) => {
    e.preventDefault()
    setDone(null)
    const answer = await save.run(() =>
      mode === "agent"
        ? tool<{ voiceMode: Mode }>("numbers_connect", { e164: number.e164 })
        : tool<{ voiceMode: Mode }>("numbers_disconnect", {
          e164: number.e164,
          mode,
          ...(mode === "forward" ? { forwardTo: forwardTo.trim() } : {})
        })
    )
    if (answer !== undefined) {
      setDone(
        `Calls to ${number.e164} now go to ${modes.find(([m]) => m === answer.voiceMode)?.[1] ?? answer.voiceMode}.`
      )
      onChanged()
    }
  }

  return (
    <li class="card number">
      <h2 class="number-title">
        {number.e164} <Badge>{number.type === "toll_free" ? "Toll-free" : "Local"}</Badge>{" "}
        <Badge tone={number.status === "active" ? "ok" : "warn"}>{number.status}</Badge>
      </h2>
      {mayRoute
        ? (
          <form onSubmit={submit} class="form">
            <Select
              label={`Incoming calls to ${number.e164} go to`}
              value={mode}
              onValue={(v) => setMode(v as Mode)}
              options={modes}
            />
            {mode === "forward" && (
              <Field
                label="Forward to"
                type="tel"
                autoComplete="tel"
                hint="In international form, e.g. +14155550199."
                value={forwardTo}
                onValue={setForwardTo}
                error={errors["forwardTo"]}
              />
            )}
            {mode === "agent" && (
              <p class="hint">
                The AI agent answers as set up under <Link href="/agent">AI agent</Link>; it must exist first.
              </p>
            )}
            <ErrorNote error={formError(save.error, errors)} />
            <Notice>{done}</Notice>
            <Button
              kind="primary"
              type="submit"
              busy={save.busy}
              disabled={mode === number.voiceMode && mode !== "forward"}
            >
              Save routing
            </Button>
          </form>
        )
        : <p>Calls go to: {modes.find(([m]) => m === number.voiceMode)?.[1]}</p>}
    </li>
  )
}

export const Numbers = () => {
  const list = useLoad(() => tool<{ numbers: ReadonlyArray<WorkspaceNumber> }>("numbers_list"), [])
  return (
    <Page title="Numbers">
      <p>Each number texts from its threads and answers calls as its routing says.</p>
      <ErrorNote error={list.error} />
      {list.data === undefined
        ? list.error === undefined && <Loading what="numbers" />
        : list.data.numbers.length === 0
        ? <p class="empty">This workspace has no number yet.</p>
        : (
          <ul class="cards" aria-label="Numbers">
            {list.data.numbers.map((n) => (
              <Routing
                key={`${n.e164}:${n.voiceMode}`}
                number={n}
                onChanged={() => void list.reload()}
              />
            ))}
          </ul>
        )}
    </Page>
  )
}
