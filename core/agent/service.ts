/**
 * The AI call agent (SPEC "Agent", CONTRACT "GET /agent", "A new agent"): read it with the month's
 * credit usage, edit its draft, publish the draft, and route a number's calls to it or away.
 * Publishing creates or updates the carrier's AI assistant (Voice
 * `publishAgent`) and keeps its id as `carrierAssistantId`.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { Voice } from "../calls/voice.ts"
import { ConversationStore } from "../conversations/store.ts"
import { FailedPrecondition, Internal, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { isPremiumRate, Phone, premiumRateProblem } from "../kernel/phone.ts"
import { NonEmptyText, Text } from "../kernel/text.ts"
import { Transactor } from "../kernel/transactor.ts"
import { NumberStore, VoiceMode } from "../numbers/model.ts"
import { isTimeZone } from "./hours.ts"
import {
  Agent,
  type AgentConfig,
  type AgentRecord,
  BusinessHours,
  businessHoursRule,
  newAgentConfig,
  RouteAction,
  toAgent
} from "./model.ts"
import { AgentStore } from "./store.ts"

/** Agent minutes a workspace's plan includes each calendar month (UTC). */
export const INCLUDED_AGENT_MINUTES = 100
export const MAX_JOBS = 20

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const TimeZone = Text(64).pipe(
  Schema.filter((zone) => isTimeZone(zone) || "must be an IANA time zone, such as America/New_York")
)
const OptionalText = (max: number) => Schema.optional(Schema.NullOr(Text(max)))

export const JobInput = Schema.Struct({ name: NonEmptyText(100), instructions: Text(4000) }).annotations(strict)

/** `PATCH /agent`: only the fields sent change; `jobs` is replaced wholesale. Unknown fields: 400. */
export const UpdateAgentInput = Schema.Struct({
  name: Schema.optional(NonEmptyText(100)),
  greeting: OptionalText(1000),
  tone: OptionalText(200),
  voice: OptionalText(100),
  language: OptionalText(35),
  instructions: OptionalText(10_000),
  enabled: Schema.optional(Schema.Boolean),
  timezone: Schema.optional(TimeZone),
  businessHours: Schema.optional(
    Schema.Struct({ ...BusinessHours.fields, timezone: Schema.optional(TimeZone) }).annotations({
      ...strict,
      description: businessHoursRule
    })
  ),
  inHoursAction: Schema.optional(RouteAction),
  offHoursAction: Schema.optional(RouteAction),
  jobs: Schema.optional(
    Schema.Array(JobInput).pipe(
      Schema.maxItems(MAX_JOBS),
      // `POST /calls` names a job by its name.
      Schema.filter((jobs) => new Set(jobs.map((j) => j.name)).size === jobs.length || "job names must be unique")
    )
  )
}).annotations({ identifier: "AgentInput", ...strict })
export type UpdateAgentInput = typeof UpdateAgentInput.Type

export const CreditUsage = Schema.Struct({
  /** The current calendar month in UTC: its first instant, and the first instant of the next. */
  periodStart: Schema.String,
  periodEnd: Schema.String,
  includedMinutes: Schema.Number,
  usedMinutes: Schema.Number
})
export type CreditUsage = typeof CreditUsage.Type

export const AgentAnswer = Schema.Struct({ agent: Agent })
export const AgentWithUsage = Schema.Struct({ agent: Schema.NullOr(Agent), creditUsage: CreditUsage })

/** `POST /numbers/{e164}/disconnect`: where the calls go instead (`app` by default). */
export const DisconnectInput = Schema.Struct({
  mode: Schema.optional(Schema.Literal("app", "voicemail", "forward")),
  forwardTo: Schema.optional(Phone)
}).annotations({ identifier: "DisconnectInput", ...strict })
export type DisconnectInput = typeof DisconnectInput.Type

export const RoutingAnswer = Schema.Struct({ ok: Schema.Literal(true), voiceMode: VoiceMode })

export const noAgent = new FailedPrecondition({ message: "Create an agent first" })
const numberNotFound = new NotFound({ message: "No such number in this workspace" })

const iso = (ms: number) => new Date(ms).toISOString()

/** The calendar month (UTC) holding `now`. */
export const creditPeriod = (now: number): { readonly start: string; readonly end: string } => {
  const d = new Date(now)
  return {
    start: iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)),
    end: iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))
  }
}

const make = Effect.gen(function*() {
  const agents = yield* AgentStore
  const numbers = yield* NumberStore
  const conversations = yield* ConversationStore
  const tx = yield* Transactor
  const voice = yield* Voice

  /** Edits of one workspace's agent run one at a time, so two first PATCHes create one agent. */
  const modify = <E>(
    p: Principal,
    change: (current: Option.Option<AgentRecord>, now: string) => Effect.Effect<AgentRecord, E>
  ) =>
    tx.withTransaction(
      Effect.gen(function*() {
        yield* tx.lock(`agent:${p.workspaceId}`)
        const next = yield* change(yield* agents.get(p.workspaceId), iso(yield* Clock.currentTimeMillis))
        yield* agents.put(next)
        return { agent: toAgent(next) }
      })
    )

  const get = (p: Principal) =>
    Effect.gen(function*() {
      const agent = yield* agents.get(p.workspaceId)
      const period = creditPeriod(yield* Clock.currentTimeMillis)
      const usedMinutes = yield* conversations.agentCallMinutes(p.workspaceId, period.start, period.end)
      return {
        agent: Option.match(agent, { onNone: () => null, onSome: toAgent }),
        creditUsage: {
          periodStart: period.start,
          periodEnd: period.end,
          includedMinutes: INCLUDED_AGENT_MINUTES,
          usedMinutes
        }
      }
    })

  /** Creates the agent with CONTRACT's defaults on the first call; the fields sent replace the draft's. */
  const update = (p: Principal, input: UpdateAgentInput) =>
    modify(p, (current, now) =>
      Effect.gen(function*() {
        const changes = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<
          AgentConfig
        >
        const { uuid } = yield* Ids
        const base = Option.getOrElse(
          current,
          (): AgentRecord => ({
            id: uuid(),
            workspaceId: p.workspaceId,
            draft: newAgentConfig,
            published: null,
            carrierAssistantId: null,
            createdAt: now,
            updatedAt: now,
            publishedAt: null
          })
        )
        return { ...base, draft: { ...base.draft, ...changes }, updatedAt: now }
      }))

  /**
   * The carrier's assistant is created or updated first, under the agent's lock (so two first
   * publishes create one assistant); a carrier refusal (409) or outage (500) publishes nothing. The
   * agent serves the whole workspace, so a test key's publish updates the live assistant too.
   */
  const publish = (p: Principal) =>
    modify(p, (current, now) =>
      Option.match(current, {
        onNone: () => Effect.fail(noAgent),
        onSome: (agent) =>
          voice.publishAgent({
            workspaceId: agent.workspaceId,
            agentId: agent.id,
            assistantId: agent.carrierAssistantId,
            config: agent.draft
          }).pipe(
            Effect.mapError((e) =>
              e.reason === "rejected"
                ? new FailedPrecondition({ message: `The carrier refused the agent: ${e.message}` })
                : new Internal({ message: `The carrier is unavailable (${e.message}); publish again` })
            ),
            Effect.map(({ assistantId }) => ({
              ...agent,
              published: agent.draft,
              carrierAssistantId: assistantId,
              publishedAt: now,
              updatedAt: now
            }))
          )
      }))

  /** The number's calls go to the agent (published or not: an unpublished agent rings the team). */
  const connect = (p: Principal, e164: string) =>
    Effect.gen(function*() {
      const found = yield* numbers.findByE164(e164)
      if (Option.isNone(found) || found.value.workspaceId !== p.workspaceId) return yield* numberNotFound
      const agent = yield* agents.get(p.workspaceId)
      if (Option.isNone(agent)) return yield* noAgent
      // SPEC sets forwardTo only in `forward` mode: an earlier forwarding target is cleared.
      yield* numbers.setRouting(p.workspaceId, e164, { voiceMode: "agent", agentId: agent.value.id, forwardTo: null })
      return { ok: true as const, voiceMode: "agent" as const }
    })

  /** From any mode (SPEC moves it from `agent`; repeating it is harmless). */
  const disconnect = (p: Principal, e164: string, input: DisconnectInput) =>
    Effect.gen(function*() {
      const mode = input.mode ?? "app"
      const forwardTo = input.forwardTo ?? null
      if (mode === "forward" && forwardTo === null) {
        return yield* new InvalidArgument({ message: "forwardTo: is required when mode is forward" })
      }
      if (mode !== "forward" && forwardTo !== null) {
        return yield* new InvalidArgument({ message: "forwardTo: only with mode forward" })
      }
      if (forwardTo === e164) return yield* new InvalidArgument({ message: "forwardTo: must not be the number itself" })
      if (forwardTo !== null && isPremiumRate(forwardTo)) {
        return yield* new InvalidArgument({ message: premiumRateProblem("forwardTo") })
      }
      const updated = yield* numbers.setRouting(p.workspaceId, e164, { voiceMode: mode, agentId: null, forwardTo })
      if (Option.isNone(updated)) return yield* numberNotFound
      return { ok: true as const, voiceMode: mode }
    })

  return { get, update, publish, connect, disconnect } as const
})

export class Agents extends Context.Tag("core/Agents")<Agents, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Agents, make)
