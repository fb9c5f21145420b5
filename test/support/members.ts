/**
 * Members seeded straight through MemberStore (the admin API for members is built elsewhere), in
 * the order given: each is a second younger than the last, so `list` (oldest first) keeps it.
 */
import { Effect, type ManagedRuntime } from "effect"
import type { MemberRecord } from "../../core/members/model.ts"
import { MemberStore } from "../../core/members/store.ts"

let seq = 0

/** Stores a member of `workspaceId` with `phone` (null: none) and answers it. */
export const addMember = async (
  runtime: ManagedRuntime.ManagedRuntime<any, any>,
  workspaceId: string,
  phone: string | null
): Promise<MemberRecord> => {
  const n = ++seq
  const member: MemberRecord = {
    id: crypto.randomUUID(),
    workspaceId,
    email: `teammate${n}-${crypto.randomUUID().slice(0, 8)}@example.com`,
    name: `Teammate ${n}`,
    role: "member",
    phone,
    createdAt: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString()
  }
  const stored = await runtime.runPromise(
    Effect.flatMap(MemberStore, (s) => s.insert(member)) as Effect.Effect<boolean>
  )
  if (!stored) throw new Error(`member ${member.email} was not stored`)
  return member
}
