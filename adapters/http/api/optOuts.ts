/** CONTRACT "Opt-outs and keywords": the workspace's opt-out list. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CreateOptOutInput, ListOptOutsInput, OptOut } from "../../../core/optouts/model.ts"
import { createOptOut, deleteOptOut, listOptOuts } from "../../../core/tools/optOuts.ts"
import { apiOptOut, optOut } from "./examples.ts"
import { capability, createdOrFound, limitParam, PhoneParam, publicGroup } from "./shared.ts"

const { created, found } = createdOrFound(
  Schema.Struct({ optOut: OptOut }).annotations({ examples: [{ optOut: apiOptOut }] })
)

export class OptOutsGroup extends publicGroup(
  HttpApiGroup.make("optOuts")
    .add(
      HttpApiEndpoint.get("list", "/opt-outs")
        .setUrlParams(Schema.Struct({ ...ListOptOutsInput.fields, limit: Schema.optional(limitParam(200)) }))
        .addSuccess(listOptOuts.output.annotations({ examples: [{ optOuts: [apiOptOut, optOut], nextCursor: null }] }))
        .annotate(
          OpenApi.Description,
          "The phones this workspace must not text, newest first; `phone` (any format) checks one number. `source`: `keyword` (the recipient texted a stop word, named in `keyword`), `carrier` (the carrier refused a text for their opt-out), `api` (recorded with `POST /opt-outs`)."
        )
        .pipe(capability(listOptOuts))
    )
    .add(
      HttpApiEndpoint.post("create", "/opt-outs")
        .setPayload(CreateOptOutInput.annotations({ examples: [{ phone: apiOptOut.phone, note: apiOptOut.note }] }))
        .addSuccess(created.annotations({ description: "Recorded" }), { status: 201 })
        .addSuccess(found.annotations({ description: "Already opted out: the opt-out on record, unchanged" }))
        .annotate(
          OpenApi.Description,
          "Record a revocation of consent received another way (a call, an email): every send to `phone` is then refused with `409`. 201 `{optOut}` when recorded; 200 `{optOut}` with the opt-out already on record, whatever its source."
        )
        .pipe(capability(createOptOut))
    )
    .add(
      HttpApiEndpoint.del("delete", "/opt-outs/:phone")
        .setPath(PhoneParam)
        .addSuccess(deleteOptOut.output.annotations({ examples: [{ deleted: true }] }))
        .annotate(
          OpenApi.Description,
          "Remove an opt-out recorded through the API (`source` `api`). 409 `Only the recipient can opt back in, by texting START` for a `keyword` or `carrier` opt-out; 404 when the phone has none."
        )
        .pipe(capability(deleteOptOut))
    )
).annotate(OpenApi.Title, "Opt-outs").annotate(
  OpenApi.Description,
  "Recipients who revoked consent to texts (STOP and the other stop words, the carrier's refusals, revocations recorded through the API); no text reaches them."
) {}
