/**
 * `GET /v1/media/:workspaceId/:key?expires=&signature=`: a stored media blob behind a signed,
 * expiring URL (no API key: the URL is the credential). Served by handlers/media.ts.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { identity, Schema } from "effect"
import { NotFound } from "./errors.ts"

const Binary = HttpApiSchema.withEncoding(
  Schema.Uint8ArrayFromSelf.annotations({ jsonSchema: { type: "string", format: "binary" } }),
  { kind: "Uint8Array", contentType: "application/octet-stream" }
)

export const MediaPath = Schema.Struct({
  workspaceId: Schema.String,
  key: Schema.String.annotations({ description: "The stored media's key, as in the signed URL" })
})
/**
 * A signed link's own parameter, never refused here: a missing one stays absent and a repeated one
 * reads as empty, so every malformed link answers the same 404 as a bad signature (no 400 telling a
 * prober which part it got wrong).
 */
const LinkParam = Schema.optional(
  Schema.transform(Schema.Union(Schema.String, Schema.Array(Schema.String)), Schema.String, {
    strict: true,
    decode: (value) => (typeof value === "string" ? value : ""),
    encode: identity
  }).annotations({
    jsonSchema: { type: "string", description: "Part of the signed URL; sent as found in the message" }
  })
)
export const MediaUrlParams = Schema.Struct({ expires: LinkParam, signature: LinkParam })

export class MediaGroup extends HttpApiGroup.make("media").add(
  HttpApiEndpoint.get("get", "/v1/media/:workspaceId/:key")
    .setPath(MediaPath)
    .setUrlParams(MediaUrlParams)
    .addSuccess(Binary.annotations({ description: "The media bytes, with their original content type." }))
    .addError(NotFound)
    .annotate(
      OpenApi.Description,
      "Download a message's media through the signed URL found in the message (valid 1 hour). No API key; an invalid, expired, unknown or incomplete URL (missing or malformed `expires` or `signature`) answers 404."
    )
)
  .annotate(OpenApi.Title, "Media")
  .annotate(OpenApi.Description, "Message media (MMS attachments) behind signed, expiring URLs.")
{}
