/** Call capabilities (SPEC "Endpoints": `GET /calls`, `POST /calls`). */
import { Effect } from "effect"
import { CallList, ListCallsInput, PlaceCallInput, PlaceCallResult } from "../calls/model.ts"
import { Calls } from "../calls/service.ts"
import { FailedPrecondition, Internal, NotFound } from "../kernel/errors.ts"
import { read, tool } from "./tool.ts"

export const listCalls = tool({
  name: "calls_list",
  title: "List calls and voicemails",
  description:
    "The workspace's call and voicemail history, newest first (`limit` 1 to 200, default 50): direction, status, who answered, duration, a signed recording URL (valid 1 hour), the speaker-labelled transcript and the AI summary. Use conversations_get for one caller's whole thread.",
  input: ListCallsInput,
  output: CallList,
  example: { limit: 20 },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p, input) => Effect.flatMap(Calls, (c) => c.list(p, input))
})

export const placeCall = tool({
  name: "calls_place",
  title: "Have the AI agent place a call",
  description:
    "Have the published AI agent phone `to` from `from` (or the workspace's default number), optionally for one of its `job`s (by name) or with extra `instructions` for this call. It rings a real phone: call only when the user asked for it. Needs a published, enabled agent (agent_get, agent_publish). Test keys dial nothing: the call is simulated (`simulated`). Pass `idempotencyKey` to make a retry safe.",
  input: PlaceCallInput,
  output: PlaceCallResult,
  example: { to: "+14155550123", instructions: "Confirm tomorrow's appointment at 10am." },
  scope: "calls:place",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: true,
  errors: [NotFound, FailedPrecondition, Internal],
  run: (p, input) => Effect.flatMap(Calls, (c) => c.place(p, input))
})
