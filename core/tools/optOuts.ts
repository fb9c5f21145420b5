/** Opt-out capabilities (CONTRACT "Opt-outs and keywords"). */
import { Effect, Schema } from "effect"
import { FailedPrecondition, NotFound } from "../kernel/errors.ts"
import { CreateOptOutInput, ListOptOutsInput, OptOut } from "../optouts/model.ts"
import { OptOuts } from "../optouts/service.ts"
import { Deleted, read, tool } from "./tool.ts"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** The phone whose opt-out a tool acts on (the REST path's `{phone}`). */
export const OptOutTarget = Schema.Struct({ phone: Schema.String.pipe(Schema.maxLength(32)) }).annotations(strict)

export const listOptOuts = tool({
  name: "opt_outs_list",
  title: "List opt-outs",
  description:
    "List the phones that must not be texted from this workspace, newest first: each with `source` (`keyword`: the recipient texted STOP or another stop word, named in `keyword`; `carrier`: the carrier refused a text because they opted out with it; `api`: recorded with opt_outs_create), `note` and `createdAt`. Give `phone` to check one number (any format; answers at most that one). Page with `limit` (1 to 200, default 50) and the answer's `nextCursor` as `cursor` until it is null. Any send to a listed phone is refused.",
  input: ListOptOutsInput,
  output: Schema.Struct({ optOuts: Schema.Array(OptOut), nextCursor: Schema.NullOr(Schema.String) }),
  example: { phone: "+14155550123" },
  scope: "contacts:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p, input) =>
    Effect.flatMap(OptOuts, (o) => o.list(p, input)).pipe(
      Effect.map((page) => ({ optOuts: page.items, nextCursor: page.nextCursor }))
    )
})

export const createOptOut = tool({
  name: "opt_outs_create",
  title: "Record an opt-out",
  description:
    "Record that `phone` asked, some other way than by text (a call, an email, in person), to receive no more texts from this workspace; `note` (up to 500 characters) says how. From then on every send to it, from any number of the workspace, is refused. Use it only when the person asked: it is the business's record of their consent being revoked. Answers the opt-out with `created` true, or the one already recorded (whatever its source) with `created` false. Undo only with opt_outs_delete, and only for an opt-out recorded here.",
  input: CreateOptOutInput,
  output: Schema.Struct({ optOut: OptOut, created: Schema.Boolean }),
  example: { phone: "+14155550123", note: "Asked on the phone not to be texted" },
  scope: "contacts:write",
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [],
  run: (p, input) => Effect.flatMap(OptOuts, (o) => o.create(p, input))
})

export const deleteOptOut = tool({
  name: "opt_outs_delete",
  title: "Remove an opt-out recorded through the API",
  description:
    "Remove the opt-out of `phone` that was recorded through the API (opt_outs_create, source `api`), for instance one recorded by mistake; texts to it are allowed again. An opt-out the recipient texted (source `keyword`) or the carrier reported (`carrier`) cannot be removed: only the recipient can opt back in, by texting START (failed_precondition). not_found when the phone has no opt-out.",
  input: OptOutTarget,
  output: Deleted,
  example: { phone: "+14155550123" },
  scope: "contacts:write",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound, FailedPrecondition],
  run: (p, { phone }) => Effect.flatMap(OptOuts, (o) => o.remove(p, phone))
})
