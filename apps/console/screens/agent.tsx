/** The AI call agent: its draft configuration, saved with agent_update and made live with agent_publish. */
import { useState } from "preact/hooks"
import type { Agent as AgentConfig } from "../../../core/agent/model.ts"
import type { CreditUsage } from "../../../core/agent/service.ts"
import { fieldErrors, formError, tool } from "../api.ts"
import { useSession } from "../session.ts"
import { Badge, Button, Checkbox, ErrorNote, Field, Loading, Notice, Page, Select, useAction, useLoad } from "../ui.tsx"

const days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const
type Day = (typeof days)[number]

const actions = [
  ["agent", "The AI agent answers"],
  ["app", "Ring the team"],
  ["voicemail", "Voicemail"],
  ["forward", "Forward (the number's forward-to)"]
] as const

interface Job {
  name: string
  instructions: string
}

interface Draft {
  name: string
  greeting: string
  tone: string
  voice: string
  language: string
  instructions: string
  enabled: boolean
  timezone: string
  inHoursAction: string
  offHoursAction: string
  alwaysOpen: boolean
  hours: Record<Day, string>
  jobs: Array<Job>
}

const draftOf = (a: AgentConfig | null): Draft => {
  const hours = Object.fromEntries(
    days.map((d) => [d, (a?.businessHours[d] ?? []).map((r) => `${r.start}-${r.end}`).join(", ")])
  ) as Record<Day, string>
  return {
    name: a?.name ?? "Front desk",
    greeting: a?.greeting ?? "",
    tone: a?.tone ?? "",
    voice: a?.voice ?? "",
    language: a?.language ?? "",
    instructions: a?.instructions ?? "",
    enabled: a?.enabled ?? true,
    timezone: a?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    inHoursAction: a?.inHoursAction ?? "agent",
    offHoursAction: a?.offHoursAction ?? "voicemail",
    alwaysOpen: a === null || days.every((d) => a.businessHours[d] === undefined),
    hours,
    jobs: (a?.jobs ?? []).map((j) => ({ ...j }))
  }
}

/** `09:00-12:00, 13:00-17:00` as ranges; the server checks the times themselves. */
const rangesOf = (text: string) =>
  text.split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => {
    const [start = "", end = ""] = s.split("-").map((t) => t.trim())
    return { start, end }
  })

const inputOf = (d: Draft) => {
  const orNull = (s: string) => (s.trim() === "" ? null : s.trim())
  return {
    name: d.name.trim(),
    greeting: orNull(d.greeting),
    tone: orNull(d.tone),
    voice: orNull(d.voice),
    language: orNull(d.language),
    instructions: orNull(d.instructions),
    enabled: d.enabled,
    timezone: d.timezone.trim(),
    inHoursAction: d.inHoursAction,
    offHoursAction: d.offHoursAction,
    businessHours: d.alwaysOpen ? {} : Object.fromEntries(days.map((day) => [day, rangesOf(d.hours[day])])),
    jobs: d.jobs.filter((j) => j.name.trim() !== "" || j.instructions.trim() !== "")
  }
}

const FIELDS = [
  "name",
  "greeting",
  "tone",
  "voice",
  "language",
  "instructions",
  "timezone",
  "businessHours",
  "jobs",
  "inHoursAction",
  "offHoursAction"
]

const Editor = (
  { agent, usage, onSaved }: {
    readonly agent: AgentConfig | null
    readonly usage: CreditUsage
    readonly onSaved: (a: AgentConfig) => void
  }
) => {
  const session = useSession()
  const [draft, setDraft] = useState<Draft>(() => draftOf(agent))
  const [said, setSaid] = useState<string | null>(null)
  const save = useAction()
  const publish = useAction()
  const errors = fieldErrors(save.error, FIELDS)
  const set = <K extends keyof Draft>(k: K) => (v: Draft[K]) => {
    setSaid(null)
    setDraft({ ...draft, [k]: v })
  }
  const setJob = (i: number, patch: Partial<Job>) =>
    set("jobs")(draft.jobs.map((j, n) => (n === i ? { ...j, ...patch } : j)))

  const submit = async (e: Event) => {
    e.preventDefault()
    const answer = await save.run(() => tool<{ agent: AgentConfig }>("agent_update", inputOf(draft)))
    if (answer !== undefined) {
      onSaved(answer.agent)
      setSaid("Draft saved. Calls keep the published configuration until you publish.")
    }
  }
  const goLive = async () => {
    const answer = await publish.run(() => tool<{ agent: AgentConfig }>("agent_publish"))
    if (answer !== undefined) {
      onSaved(answer.agent)
      setSaid("Published: calls now use this configuration.")
    }
  }

  return (
    <>
      <p>
        {agent === null ? <Badge>Not created yet</Badge> : (
          <Badge tone={agent.status === "published" ? "ok" : "warn"}>
            {agent.status === "published" ? "Published" : "Draft differs from what calls use"}
          </Badge>
        )}{" "}
        <span class="muted">
          {usage.usedMinutes} of {usage.includedMinutes} agent minutes used this month
        </span>
      </p>
      <form class="form" onSubmit={submit}>
        <Field label="Name" value={draft.name} onValue={set("name")} error={errors["name"]} />
        <Field
          label="Greeting"
          multiline
          rows={2}
          hint="What the agent says first."
          value={draft.greeting}
          onValue={set("greeting")}
          error={errors["greeting"]}
        />
        <Field
          label="Instructions"
          multiline
          rows={5}
          hint="What the agent knows and how it should handle calls."
          value={draft.instructions}
          onValue={set("instructions")}
          error={errors["instructions"]}
        />
        <div class="grid-3">
          <Field label="Tone" value={draft.tone} onValue={set("tone")} error={errors["tone"]} />
          <Field label="Voice" value={draft.voice} onValue={set("voice")} error={errors["voice"]} />
          <Field label="Language" value={draft.language} onValue={set("language")} error={errors["language"]} />
        </div>
        <Checkbox label="The agent answers calls (enabled)" checked={draft.enabled} onChecked={set("enabled")} />
        <fieldset>
          <legend>Business hours</legend>
          <Field
            label="Time zone"
            hint="An IANA zone, e.g. America/New_York."
            value={draft.timezone}
            onValue={set("timezone")}
            error={errors["timezone"]}
          />
          <Checkbox label="Always open" checked={draft.alwaysOpen} onChecked={set("alwaysOpen")} />
          {!draft.alwaysOpen && (
            <div class="grid-2">
              {days.map((day) => (
                <Field
                  key={day}
                  label={day.charAt(0).toUpperCase() + day.slice(1)}
                  placeholder="Closed"
                  hint="e.g. 09:00-17:00, several separated by commas"
                  value={draft.hours[day]}
                  onValue={(v) => set("hours")({ ...draft.hours, [day]: v })}
                />
              ))}
            </div>
          )}
          <ErrorNote error={errors["businessHours"]} />
          <div class="grid-2">
            <Select
              label="In hours, calls go to"
              value={draft.inHoursAction}
              onValue={set("inHoursAction")}
              options={actions}
            />
            <Select
              label="Out of hours, calls go to"
              value={draft.offHoursAction}
              onValue={set("offHoursAction")}
              options={actions}
            />
          </div>
        </fieldset>
        <fieldset>
          <legend>Jobs (outbound calls the agent can place)</legend>
          {draft.jobs.length === 0 && <p class="muted">No jobs.</p>}
          {draft.jobs.map((job, i) => (
            <div class="job" key={i}>
              <Field label={`Job ${i + 1} name`} value={job.name} onValue={(v) => setJob(i, { name: v })} />
              <Field
                label={`Job ${i + 1} instructions`}
                multiline
                value={job.instructions}
                onValue={(v) => setJob(i, { instructions: v })}
              />
              <Button onClick={() => set("jobs")(draft.jobs.filter((_, n) => n !== i))}>Remove job {i + 1}</Button>
            </div>
          ))}
          <Button onClick={() => set("jobs")([...draft.jobs, { name: "", instructions: "" }])}>Add a job</Button>
          <ErrorNote error={errors["jobs"]} />
        </fieldset>
        <ErrorNote error={formError(save.error, errors)} />
        <ErrorNote error={publish.error} />
        <Notice>{said}</Notice>
        <div class="actions">
          {session.tools.has("agent_update") && (
            <Button kind="primary" type="submit" busy={save.busy}>
              {agent === null ? "Create the agent" : "Save draft"}
            </Button>
          )}
          {agent !== null && session.tools.has("agent_publish") && (
            <Button
              busy={publish.busy}
              onClick={() => void goLive()}
              disabled={agent.status === "published"}
            >
              Publish
            </Button>
          )}
        </div>
      </form>
    </>
  )
}

export const Agent = () => {
  const loaded = useLoad(
    () => tool<{ agent: AgentConfig | null; creditUsage: CreditUsage }>("agent_get"),
    []
  )
  return (
    <Page title="AI agent">
      <ErrorNote error={loaded.error} />
      {loaded.data === undefined
        ? loaded.error === undefined && <Loading what="the agent" />
        : (
          <Editor
            agent={loaded.data.agent}
            usage={loaded.data.creditUsage}
            onSaved={(agent) => loaded.setData({ ...loaded.data!, agent })}
          />
        )}
    </Page>
  )
}
