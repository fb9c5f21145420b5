/**
 * The REST side of the capability table (core/tools): which endpoint offers which tool, read from
 * the HttpApi's `Capability` annotations (api/shared.ts `capability`), and the handlers of those
 * endpoints, derived from their tools by one builder. A capability group has no handler file: each
 * route runs its tool with the route's path, query and body parameters, flat; through the
 * idempotency runner when the tool takes a key; uninterruptibly when the tool writes, so a client
 * that hangs up cannot cut a use case between its outside effect (a carrier, a charge) and its record.
 * The status is the route's success schema's; a route with one success per status
 * (api/shared.ts `createdOrFound`) is answered with the one its tool's answer matches.
 */
import { HttpApi, HttpApiSchema } from "@effect/platform"
import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import type { IdempotencyStore } from "../../core/idempotency/store.ts"
import { type AnyTool, toolIndex, tools, type ToolServices } from "../../core/tools/index.ts"
import type { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { Api } from "./api.ts"
import { Capability } from "./api/shared.ts"
import { idempotent } from "./idempotency.ts"
import { CurrentPrincipal } from "./platform.ts"
import { group } from "./router.ts"
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

/** The groups whose every endpoint offers a tool: their handlers are all derived here. */
export const CAPABILITY_GROUPS = [
  "contacts",
  "optOuts",
  "conversations",
  "messages",
  "scheduling",
  "calls",
  "numbers",
  "messaging",
  "agent",
  "webhooks"
] as const
export type CapabilityGroup = (typeof CAPABILITY_GROUPS)[number]

/** How the route of `tool` is served: uninterruptible whenever the tool is not read-only. */
export const handlerOptions = (tool: AnyTool): { readonly uninterruptible: boolean } => ({
  uninterruptible: !tool.hints.readOnly
})

interface DecodedRequest {
  readonly path?: object
  readonly urlParams?: object
  readonly payload?: object
  readonly headers?: { readonly "idempotency-key"?: string | undefined }
}

/** A route's handler: its tool run with the route's parameters, flat (the tool's input names them alike). */
const handlerOf = (tool: AnyTool, successStatus: number) => (request: DecodedRequest) =>
  Effect.flatMap(CurrentPrincipal, (principal) => {
    const run = tool.run(principal, { ...request.path, ...request.urlParams, ...request.payload })
    if (!tool.idempotencyKey) return run
    const key = request.headers?.["idempotency-key"]
    return idempotent({ principal, key, request: request.payload, status: successStatus, success: tool.output, run })
  })

const byName = toolIndex(tools)

/** The tool an endpoint offers; a capability group's endpoint without one is a programming error, caught at start-up. */
const toolOf = (groupName: string, endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps): AnyTool => {
  const name = Context.getOption(endpoint.annotations, Capability)
  const found = Option.isSome(name) ? byName.get(name.value) : undefined
  if (found === undefined) {
    throw new Error(`${groupName}.${endpoint.name} is in a capability group but offers no tool of the table`)
  }
  return found
}

/**
 * The handlers of one capability group, given HttpApiBuilder's `handlers` (or any object with its
 * `handle(name, handler, options)`): exported so a test can see how each route is served.
 */
export const buildCapabilityHandlers = <
  H extends { handle: (name: string, handler: any, options?: { readonly uninterruptible?: boolean }) => H }
>(
  groupName: CapabilityGroup,
  handlers: H
): H => {
  const endpoints =
    (Api.groups as unknown as Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>)[groupName]!.endpoints
  let out = handlers
  for (const endpoint of Object.values(endpoints) as Array<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>) {
    const tool = toolOf(groupName, endpoint)
    out = out.handle(
      endpoint.name,
      handlerOf(tool, HttpApiSchema.getStatusSuccess(endpoint.successSchema)),
      handlerOptions(tool)
    )
  }
  return out
}

/** Every capability group's handlers: the tools' services, and the idempotency runner's. */
export const CapabilitiesLive = Layer.mergeAll(
  ...(CAPABILITY_GROUPS.map((name) =>
    group(Api, name as any, (handlers: any) => buildCapabilityHandlers(name, handlers))
  ) as unknown as [Layer.Layer<unknown>])
) as unknown as Layer.Layer<
  HttpApiGroup.ApiGroup<"switchboard", CapabilityGroup>,
  never,
  ToolServices | IdempotencyStore | WorkspaceClock
>
