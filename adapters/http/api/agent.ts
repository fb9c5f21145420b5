/** SPEC "Agent": the AI call agent's configuration, and routing a number's calls to it or away. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import type { Agent } from "../../../core/agent/model.ts"
import { DisconnectInput, INCLUDED_AGENT_MINUTES, UpdateAgentInput } from "../../../core/agent/service.ts"
import type { E164 } from "../../../core/kernel/phone.ts"
import { connectNumber, disconnectNumber, getAgent, publishAgent, updateAgent } from "../../../core/tools/agent.ts"
import { capability, E164Param, publicGroup } from "./shared.ts"

const agent: Agent = {
  id: "5f0c2a9e-8d1b-4c3a-9e7f-1a2b3c4d5e6f",
  name: "Front desk",
  greeting: "Thanks for calling Acme Plumbing, how can I help?",
  tone: "friendly",
  voice: null,
  language: "en-US",
  instructions: "Book appointments; take a message for anything else.",
  status: "published",
  enabled: true,
  timezone: "America/New_York",
  businessHours: { monday: [{ start: "09:00", end: "17:00" }], tuesday: [{ start: "09:00", end: "17:00" }] },
  inHoursAction: "agent",
  offHoursAction: "voicemail",
  jobs: [{ name: "book", instructions: "Offer the next free slot and confirm the address." }]
}

export class AgentGroup extends publicGroup(
  HttpApiGroup.make("agent")
    .add(
      HttpApiEndpoint.get("get", "/agent")
        .addSuccess(
          getAgent.output.annotations({
            examples: [
              {
                agent,
                creditUsage: {
                  periodStart: "2026-08-01T00:00:00.000Z",
                  periodEnd: "2026-09-01T00:00:00.000Z",
                  includedMinutes: INCLUDED_AGENT_MINUTES,
                  usedMinutes: 12
                }
              }
            ]
          })
        )
        .annotate(
          OpenApi.Description,
          `The workspace's agent (null until the first \`PATCH /agent\`) and its credit usage this calendar month (UTC, \`periodEnd\` exclusive): ${INCLUDED_AGENT_MINUTES} included minutes, and the minutes of the calls the agent answered, each rounded up to a whole minute. The agent shown is the draft; \`status\` is \`published\` when the draft is exactly the live configuration and \`draft\` otherwise (never published, or edited since).`
        )
        .pipe(capability(getAgent))
    )
    .add(
      HttpApiEndpoint.patch("update", "/agent")
        .setPayload(
          UpdateAgentInput.annotations({ examples: [Schema.decodeSync(UpdateAgentInput)(updateAgent.example)] })
        )
        .addSuccess(updateAgent.output.annotations({ examples: [{ agent: { ...agent, status: "draft" } }] }))
        .annotate(
          OpenApi.Description,
          "Create or edit the agent's draft. The first call creates the agent with `name` `Agent`, `enabled` true, `timezone` `UTC`, `businessHours` `{}` (no day set: always in hours), `inHoursAction` `agent`, `offHoursAction` `voicemail`, `jobs` `[]`. Only the fields sent change; `jobs` is replaced wholesale (at most 20, names unique). `timezone` and `businessHours.timezone` are IANA time zones; `businessHours` days (`monday`..`sunday`) hold `{start, end}` ranges in `HH:MM`, start before end, none overlapping; once any day is set, a day not set is closed. The hours are read in `businessHours.timezone` when it is set, whatever `timezone` says; without it, in `timezone`. An `inHoursAction`/`offHoursAction` of `forward` sends the call to the number's own `forwardTo` (kept by `connect`); a number without one takes a voicemail instead. The published `greeting` is also what a caller sent to voicemail hears before the tone (without one, a greeting naming the workspace); on a real carrier `voice` is the carrier's voice id (Telnyx: `Telnyx.KokoroTTS.af_heart`) and `language` a language code such as `en-US`. Nothing goes live until `POST /agent/publish`: a change leaves `status` `draft` (`published` again only if the draft is changed back to exactly the live configuration). 400 names the field."
        )
        .pipe(capability(updateAgent))
    )
    .add(
      HttpApiEndpoint.post("publish", "/agent/publish")
        .addSuccess(publishAgent.output.annotations({ examples: [{ agent }] }))
        .annotate(
          OpenApi.Description,
          "Make the draft the configuration calls use (`status` `published`). 409 `Create an agent first` before any `PATCH /agent`."
        )
        .pipe(capability(publishAgent))
    )
    .add(
      HttpApiEndpoint.post("connect", "/numbers/:e164/connect")
        .setPath(E164Param)
        .addSuccess(connectNumber.output.annotations({ examples: [{ ok: true, voiceMode: "agent" }] }))
        .annotate(
          OpenApi.Description,
          "Route the number's inbound calls to the agent (`voiceMode` `agent`, `agentId` the agent's id); no body. The agent answers them once published and enabled, in or out of hours as its actions say; until then they ring the team. A `forwardTo` the number has is kept, for an agent action `forward`. 404 when the number is not in the workspace; 409 `Create an agent first`."
        )
        .pipe(capability(connectNumber))
    )
    .add(
      HttpApiEndpoint.post("disconnect", "/numbers/:e164/disconnect")
        .setPath(E164Param)
        // No body reads as null (nodeServer.ts, web.ts).
        .setPayload(
          Schema.NullOr(DisconnectInput).annotations({
            examples: [{ mode: "forward", forwardTo: "+14155550199" as E164 }]
          })
        )
        .addSuccess(disconnectNumber.output.annotations({ examples: [{ ok: true, voiceMode: "app" }] }))
        .annotate(
          OpenApi.Description,
          "Route the number's inbound calls away from the agent: `mode` `app` (ring the team: every member with a `phone` at once for 25 seconds, the first to answer takes the call, else voicemail; the default), `voicemail`, or `forward` to `forwardTo` (E.164, required for `forward` and only then). The body is optional. Clears `agentId`, and `forwardTo` unless forwarding. 404 when the number is not in the workspace."
        )
        .pipe(capability(disconnectNumber))
    )
).annotate(OpenApi.Title, "Agent").annotate(
  OpenApi.Description,
  "The workspace's AI voice agent: draft and published configuration, credit usage, and which numbers it answers."
) {}
