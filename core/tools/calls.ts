/** Call capabilities (SPEC "Endpoints": `GET /calls`, `POST /calls`). */
import { Effect } from "effect"
import { ListCallsInput, PlaceCallInput } from "../calls/model.ts"
import { Calls } from "../calls/service.ts"
import { tool } from "./tool.ts"

export const listCalls = tool({
  name: "list_calls",
  description: "Call and voicemail history, newest first: direction, status, who answered, duration, signed recording URL, transcript and summary.",
  input: ListCallsInput,
  example: { limit: 20 },
  scope: "conversations:read",
  run: (p, input) => Effect.flatMap(Calls, (c) => c.list(p, input))
})

export const placeCall = tool({
  name: "place_call",
  description: "Have the published AI agent call `to` from `from` (or the workspace's default number), optionally for one of its `job`s or with extra `instructions`. Test keys place nothing: the call is simulated (`simulated`).",
  input: PlaceCallInput,
  example: { to: "+14155550123", instructions: "Confirm tomorrow's appointment at 10am." },
  scope: "calls:place",
  run: (p, input) => Effect.flatMap(Calls, (c) => c.place(p, input))
})
