import { Effect, type Option } from "effect"
import type { NotFound } from "./errors.ts"
import { isUuid } from "./ids.ts"

/**
 * The row `find` loads for `id`, or `notFound`. An id that is not a UUID names no row: it is the
 * same 404 without a query (and never reaches a uuid column as a SQL error).
 */
export const findOr404 = <A, E, R>(
  id: string,
  find: (id: string) => Effect.Effect<Option.Option<A>, E, R>,
  notFound: NotFound
): Effect.Effect<A, E | NotFound, R> =>
  isUuid(id) ? Effect.flatMap(find(id), (found) => Effect.orElseFail(found, () => notFound)) : Effect.fail(notFound)
