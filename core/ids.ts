import { Context } from "effect"

/** Where new ids come from; tests may provide a deterministic generator. */
export class Ids extends Context.Reference<Ids>()("core/Ids", {
  defaultValue: () => ({ uuid: (): string => crypto.randomUUID() })
}) {}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** SPEC: a malformed id answers 404 like an unknown one, so callers check this before any store. */
export const isUuid = (s: string): boolean => UUID_PATTERN.test(s)
