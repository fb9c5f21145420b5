/**
 * Which public endpoint offers which tool of core/tools: read from the HttpApi's `Capability`
 * annotations (api/shared.ts `capability`), so the tie is declared once, on the route.
 */
import { HttpApi } from "@effect/platform"
import { Context, Option } from "effect"
import { Api } from "./api.ts"
import { Capability } from "./api/shared.ts"
import { Authorization } from "./security.ts"

export interface CapabilityEndpoint {
  readonly method: string
  /** As the router declares it, params as `:name` (`/v1/api/contacts/:id`). */
  readonly path: string
  readonly tool: string
}

export interface ApiEndpoint {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly path: string
  /** Behind the API-key middleware. */
  readonly authorized: boolean
  /** The tool it offers, if any. */
  readonly tool: string | undefined
}

/** Every endpoint of the HttpApi with its middleware and tool. */
export const apiEndpoints = (): ReadonlyArray<ApiEndpoint> => {
  const found: Array<ApiEndpoint> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      found.push({
        group: group.identifier,
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        authorized: [...middleware].some((m) => m.key === Authorization.key),
        tool: Option.getOrUndefined(Context.getOption(mergedAnnotations, Capability))
      })
    }
  })
  return found
}

/** The endpoints that offer a tool, one per tool. */
export const capabilityEndpoints = (): ReadonlyArray<CapabilityEndpoint> =>
  apiEndpoints().flatMap(({ method, path, tool }) => (tool === undefined ? [] : [{ method, path, tool }]))
