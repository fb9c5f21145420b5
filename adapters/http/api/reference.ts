/**
 * The API describing itself: `GET /v1/api/openapi.json` (SPEC "Conventions: Spec"), no key, and the
 * reference page at `/docs` that renders it in a browser (handlers/reference.ts). The page and its
 * script are pages, not API: left out of the document, as the console's `/app` is.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"

/** Where the OpenAPI document is served. */
export const OPENAPI_PATH = "/v1/api/openapi.json"

/** Where the reference page is served. */
export const DOCS_PATH = "/docs"

const OpenApiDocument = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "OpenApiDocument",
  jsonSchema: { type: "object", description: "An OpenAPI 3.1 document: this one" }
})

const Html = HttpApiSchema.withEncoding(Schema.String, { kind: "Text", contentType: "text/html" })
const Script = HttpApiSchema.withEncoding(Schema.String, { kind: "Text", contentType: "text/javascript" })

export class ReferenceGroup extends HttpApiGroup.make("reference")
  .add(
    HttpApiEndpoint.get("openapi", OPENAPI_PATH)
      .addSuccess(OpenApiDocument)
      .annotate(OpenApi.Summary, "Get the OpenAPI document")
      .annotate(
        OpenApi.Description,
        `The OpenAPI 3.1 description of every operation and webhook, this one included. No key. Rendered for reading at \`${DOCS_PATH}\`.`
      )
  )
  .add(HttpApiEndpoint.get("page", DOCS_PATH).addSuccess(Html).annotate(OpenApi.Exclude, true))
  .add(
    HttpApiEndpoint.get("script", `${DOCS_PATH}/:name`)
      .setPath(Schema.Struct({ name: Schema.String }))
      .addSuccess(Script)
      .annotate(OpenApi.Exclude, true)
  )
  .annotate(OpenApi.Title, "Reference")
  .annotate(OpenApi.Description, `This API's own description; a browser reads it rendered at \`${DOCS_PATH}\``)
{}
