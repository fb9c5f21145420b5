/** What every screen may ask: who is signed in, where, and which capabilities the server lets them call. */
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { Member } from "../../core/members/model.ts"
import type { Me } from "./api.ts"

export interface Session {
  readonly me: Me
  /** The names of the tools `GET /v1/app/tools` lists for this member. */
  readonly tools: ReadonlySet<string>
  /** Every scope some listed tool needs: what a key made here may be given. */
  readonly scopes: ReadonlyArray<string>
  /** The workspace's members, for names and assignment (empty when the member may not list them). */
  readonly members: ReadonlyArray<Member>
  readonly refresh: () => Promise<void>
  readonly signOut: () => Promise<void>
}

export const SessionContext = createContext<Session | null>(null)

export const useSession = (): Session => {
  const s = useContext(SessionContext)
  if (s === null) throw new Error("useSession outside a signed-in console")
  return s
}

/** Admin screens (numbers, registration, agent, opt-outs, developer settings): hidden from the `member` role. */
export const isAdmin = (s: Session) => s.me.member.role !== "member"

/** A member's name by id, "You" for the one signed in. */
export const memberName = (s: Session, id: string | null): string | null => {
  if (id === null) return null
  if (id === s.me.member.id) return "You"
  return s.members.find((m) => m.id === id)?.name ?? "A former member"
}
