/** Scheduled messages and broadcasts (CONTRACT "Scheduled messages and broadcasts"). */
import { Effect, Schema } from "effect"
import { FailedPrecondition, NotFound } from "../kernel/errors.ts"
import {
  Broadcast,
  BroadcastRecipient,
  CreateBroadcastInput,
  CreateScheduledMessageInput,
  ListBroadcastsInput,
  ListRecipientsInput,
  ListScheduledMessagesInput,
  ScheduledMessage
} from "../scheduling/model.ts"
import { Scheduling } from "../scheduling/service.ts"
import { ById, read, tool, WithId } from "./tool.ts"

const ScheduledEnvelope = Schema.Struct({ scheduledMessage: ScheduledMessage })
const BroadcastEnvelope = Schema.Struct({ broadcast: Broadcast })

export const createScheduledMessage = tool({
  name: "scheduled_messages_create",
  title: "Schedule a text message",
  description:
    "Schedule an SMS (MMS with `mediaUrls`) to `to`, or into the conversation `conversationId`, for `sendAt` (a date-time with its offset, 1 minute to 30 days ahead). At that time it is sent exactly as messages_send would send it then: the texting registration, opt-outs and the sending number are checked then, and a refusal is kept in `failure`. It waits for the recipient's quiet hours (by default 21:00 to 08:00 in their time zone) and for the workspace's texting pace. Cancel it with scheduled_messages_cancel before it is sent. Pass `idempotencyKey` to make a retry safe.",
  input: CreateScheduledMessageInput,
  output: ScheduledEnvelope,
  example: { to: "+14155550123", body: "Reminder: your cleaning is tomorrow at 9:00.", sendAt: "2026-12-01T17:00:00Z" },
  scope: "messages:send",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: true,
  errors: [NotFound, FailedPrecondition],
  run: (p, input) => Effect.flatMap(Scheduling, (s) => s.createScheduled(p, input))
})

export const listScheduledMessages = tool({
  name: "scheduled_messages_list",
  title: "List scheduled messages",
  description:
    "List scheduled messages, soonest first; `status` (`scheduled`, `sent`, `failed`, `canceled`) filters. Page with `limit` (1 to 100, default 50) and the answer's `nextCursor` as `cursor`.",
  input: ListScheduledMessagesInput,
  output: Schema.Struct({
    scheduledMessages: Schema.Array(ScheduledMessage),
    nextCursor: Schema.NullOr(Schema.String)
  }),
  example: { status: "scheduled" },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p, input) =>
    Effect.flatMap(Scheduling, (s) => s.listScheduled(p, input)).pipe(
      Effect.map((page) => ({ scheduledMessages: page.items, nextCursor: page.nextCursor }))
    )
})

export const getScheduledMessage = tool({
  name: "scheduled_messages_get",
  title: "Get a scheduled message",
  description:
    "A scheduled message by `id`: its `status`, and once sent the `messageId` of the message in its conversation, or the `failure` it met.",
  input: ById,
  output: ScheduledEnvelope,
  example: { id: "01a20307-1c76-7000-ad98-06c77d1e0100" },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Scheduling, (s) => s.getScheduled(p, id))
})

export const cancelScheduledMessage = tool({
  name: "scheduled_messages_cancel",
  title: "Cancel a scheduled message",
  description:
    "Cancel a scheduled message that has not been sent (status `canceled`; canceling again answers the same). failed_precondition once it is being sent, sent or failed.",
  input: ById,
  output: ScheduledEnvelope,
  example: { id: "01a20307-1c76-7000-ad98-06c77d1e0100" },
  scope: "messages:send",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound, FailedPrecondition],
  run: (p, { id }) => Effect.flatMap(Scheduling, (s) => s.cancelScheduled(p, id))
})

export const createBroadcast = tool({
  name: "broadcasts_create",
  title: "Send a broadcast",
  description:
    "Text the same `body` to many people: `recipients` by `phones`, `contactIds` and `tags` (contacts carrying any of them, by their first phone), deduplicated, at most 10,000. Each recipient gets its own message in its own conversation, sent as messages_send would send it; recipients who opted out are skipped and counted. It starts at `sendAt` (up to 30 days ahead) or now, waits for each recipient's quiet hours, and goes at the workspace's texting pace (75 message segments a minute unless the operator set more). Follow it with broadcasts_get and broadcasts_recipients; cancel with broadcasts_cancel. Send only what the business's recipients agreed to receive. Pass `idempotencyKey` to make a retry safe.",
  input: CreateBroadcastInput,
  output: BroadcastEnvelope,
  example: {
    body: "We're closed Friday for the holiday. Reply STOP to opt out.",
    recipients: { tags: ["patients"] }
  },
  scope: "messages:send",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: true,
  errors: [NotFound],
  run: (p, input) => Effect.flatMap(Scheduling, (s) => s.createBroadcast(p, input))
})

export const listBroadcasts = tool({
  name: "broadcasts_list",
  title: "List broadcasts",
  description:
    "List broadcasts, newest first, each with its `status` and `counts`. Page with `limit` (1 to 100, default 50) and `nextCursor`.",
  input: ListBroadcastsInput,
  output: Schema.Struct({ broadcasts: Schema.Array(Broadcast), nextCursor: Schema.NullOr(Schema.String) }),
  example: {},
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p, input) =>
    Effect.flatMap(Scheduling, (s) => s.listBroadcasts(p, input)).pipe(
      Effect.map((page) => ({ broadcasts: page.items, nextCursor: page.nextCursor }))
    )
})

export const getBroadcast = tool({
  name: "broadcasts_get",
  title: "Get a broadcast",
  description:
    "A broadcast by `id`: `status` (`scheduled`, `sending`, `completed`, `canceled`) and `counts` (total = sent + failed + skippedOptedOut + skippedCanceled + pending).",
  input: ById,
  output: BroadcastEnvelope,
  example: { id: "01a20307-1c76-7000-ad98-06c77d1e0101" },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Scheduling, (s) => s.getBroadcast(p, id))
})

export const listBroadcastRecipients = tool({
  name: "broadcasts_recipients",
  title: "List a broadcast's recipients",
  description:
    "A broadcast's recipients in the order they are sent: each `phone`, `contactId`, `status` (`pending`, `sent`, `failed`, `skipped`), `messageId` once sent, and `failure` (`code` and `message`: the refusal, `opted_out`, `canceled`, or `unknown_outcome` when the process sending it stopped before the carrier's answer was recorded; such a text is never sent twice). `status` filters; page with `limit` (1 to 200, default 50) and `nextCursor`.",
  input: WithId(ListRecipientsInput),
  output: Schema.Struct({ recipients: Schema.Array(BroadcastRecipient), nextCursor: Schema.NullOr(Schema.String) }),
  example: { id: "01a20307-1c76-7000-ad98-06c77d1e0101", status: "failed" },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id, ...input }) =>
    Effect.flatMap(Scheduling, (s) => s.listRecipients(p, id, input)).pipe(
      Effect.map((page) => ({ recipients: page.items, nextCursor: page.nextCursor }))
    )
})

export const cancelBroadcast = tool({
  name: "broadcasts_cancel",
  title: "Cancel a broadcast",
  description:
    "Stop a broadcast: recipients not yet sent are skipped (`skippedCanceled`); texts already on their way finish. Canceling again answers the same; failed_precondition once it has completed.",
  input: ById,
  output: BroadcastEnvelope,
  example: { id: "01a20307-1c76-7000-ad98-06c77d1e0101" },
  scope: "messages:send",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound, FailedPrecondition],
  run: (p, { id }) => Effect.flatMap(Scheduling, (s) => s.cancelBroadcast(p, id))
})
