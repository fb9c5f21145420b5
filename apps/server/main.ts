/**
 * Composes the application from configuration: database (Postgres or embedded PGlite), migrations,
 * stores, core services and the HTTP app. node.ts and deno.ts only add a server around it.
 */
import { PgClient } from "@effect/sql-pg"
import { Console, Effect, Layer, Option } from "effect"
import { HttpAppLive } from "../../adapters/http/app.ts"
import * as Pglite from "../../adapters/pglite/PgliteClient.ts"
import * as RateLimit from "../../adapters/ratelimit/memory.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"
import * as Dns from "../../adapters/webhooks/dns.ts"
import * as Sender from "../../adapters/webhooks/sender.ts"
import * as WebhookWorker from "../../adapters/webhooks/worker.ts"
import { CoreLive } from "../../core/layer.ts"
import { layerOutboundGuard } from "../../core/outbound.ts"
import { CursorCodec, makeCursorCodec } from "../../core/pagination.ts"
import { Workspaces } from "../../core/workspaces/service.ts"
import type { ServerConfig } from "./config.ts"

/** Postgres when DATABASE_URL is set, otherwise PGlite under DATA_DIR; migrated before use. */
export const SqlLive = (config: ServerConfig) =>
  Option.match(config.databaseUrl, {
    onSome: (url) => PgClient.layer({ url, maxConnections: 20 }),
    onNone: () => Pglite.layer({ dataDir: `${config.dataDir}/pglite` })
  })

export const StoresLive = (config: ServerConfig) =>
  Layer.mergeAll(
    SqlStores.layer,
    Layer.effect(CursorCodec, Effect.flatMap(SqlStores.cursorSecret, makeCursorCodec))
  ).pipe(Layer.provide(Migrate.layer), Layer.provideMerge(SqlLive(config)))

/** The outside world the core reaches out to: DNS for the URL guard, and the webhook sender. */
export const OutboundLive = (config: ServerConfig) =>
  Layer.merge(layerOutboundGuard(config.outboundAllowPrivate).pipe(Layer.provide(Dns.layer)), Sender.layer)

export const ServicesLive = (config: ServerConfig) =>
  CoreLive.pipe(
    Layer.provideMerge(Layer.merge(RateLimit.layer(config.rateLimitPerMinute), OutboundLive(config))),
    Layer.provideMerge(StoresLive(config))
  )

/** First boot on an empty store prints one test key, once; only its hash is kept. */
export const BootstrapLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const first = yield* Effect.flatMap(Workspaces, (w) => w.bootstrap)
    if (Option.isSome(first)) {
      const { workspace, key } = first.value
      yield* Console.log(
        [
          "",
          `Created "${workspace.name}" (${workspace.id}) on first boot.`,
          "Its test API key, shown once (only a hash is stored):",
          "",
          `  ${key.token}`,
          ""
        ].join("\n")
      )
    }
  })
)

/** The HTTP app with everything it needs, ready for a server (Node) or a web handler (Deno). */
export const AppLive = (config: ServerConfig) =>
  Layer.mergeAll(
    HttpAppLive({ adminToken: config.adminToken }),
    BootstrapLive,
    config.webhookWorker ? WebhookWorker.layer() : Layer.empty
  ).pipe(
    Layer.provide(ServicesLive(config))
  )
