/** Every SQL store over a client, migrated, with webhook secrets sealed under one key per test process. */
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as Secrets from "../../adapters/sql/secrets.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"

/** Shared by every layer a test builds, so two pools on one database agree on it. */
export const TEST_SECRETS_KEY = crypto.getRandomValues(new Uint8Array(Secrets.KEY_BYTES))

export const sqlStores = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  SqlStores.layer.pipe(Layer.provide(Secrets.layer(TEST_SECRETS_KEY)), Layer.provide(Migrate.layer), Layer.provideMerge(client))
