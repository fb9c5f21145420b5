/**
 * The Messaging service: sending (outbound.ts), what the carrier sends back (inbound.ts), both over
 * one thread resolution (threads.ts) and one media intake (attachments.ts).
 */
import { Context, Effect, Layer } from "effect"
import { makeAttachments } from "./attachments.ts"
import { makeInbound } from "./inbound.ts"
import { makeOutbound } from "./outbound.ts"
import { makeThreads } from "./threads.ts"

export const make = Effect.gen(function*() {
  const threads = yield* makeThreads
  const attachments = yield* makeAttachments
  const outbound = yield* makeOutbound(threads, attachments)
  return {
    send: outbound.send,
    sendWith: outbound.sendWith,
    ...(yield* makeInbound(threads, attachments, outbound.reply))
  } as const
})

export class Messaging extends Context.Tag("core/Messaging")<Messaging, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Messaging, make)
