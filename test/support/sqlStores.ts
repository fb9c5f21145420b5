/** Every SQL store over a client, migrated, with secrets sealed under one key per test process. */
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as Secrets from "../../adapters/sql/secrets.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"

/** Shared by every layer a test builds, so two pools on one database agree on it. */
export const TEST_SECRETS_KEY = crypto.getRandomValues(new Uint8Array(Secrets.KEY_BYTES))

/** The stores as a process with this key (and `previous`) builds them over the SqlClient it is given, and its server secrets. */
export const sqlStoresWithKey = (key: Uint8Array, previous?: Uint8Array) =>
  SqlStores.layer.pipe(Layer.provideMerge(Secrets.layer(key, previous)), Layer.provide(Migrate.layer))

export const sqlStores = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  sqlStoresWithKey(TEST_SECRETS_KEY).pipe(Layer.provideMerge(client))
