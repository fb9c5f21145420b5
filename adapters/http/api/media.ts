/**
 * `GET /v1/media/:workspaceId/:key?expires=&signature=`: a stored media blob behind a signed,
 * expiring URL (no API key: the URL is the credential). Served by handlers/media.ts.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidArgument, NotFound } from "./errors.ts"

const Binary = HttpApiSchema.withEncoding(
  Schema.Uint8ArrayFromSelf.annotations({ jsonSchema: { type: "string", format: "binary" } }),
  { kind: "Uint8Array", contentType: "application/octet-stream" }
)

export const MediaPath = Schema.Struct({ workspaceId: Schema.String, key: Schema.String })
export const MediaUrlParams = Schema.Struct({ expires: Schema.String, signature: Schema.String })

export class MediaGroup extends HttpApiGroup.make("media").add(
  HttpApiEndpoint.get("get", "/v1/media/:workspaceId/:key")
    .setPath(MediaPath)
    .setUrlParams(MediaUrlParams)
    .addSuccess(Binary.annotations({ description: "The media bytes, with their original content type." }))
    .addError(NotFound)
    .addError(InvalidArgument)
    .annotate(
      OpenApi.Description,
      "Download a message's media through the signed URL found in the message (valid 1 hour). No API key; an invalid, expired or unknown URL answers 404."
    )
) {}
