/**
 * The console's one way to the server: the JSON API under /v1/app (CONTRACT "Members and the
 * console"). Same-origin requests with the session cookie; the browser adds `Origin` to every POST,
 * which the server requires of state-changing requests. Every capability goes through
 * `POST /v1/app/tools/<name>`, so the console does nothing REST or MCP cannot.
 */
import type { Member, Role } from "../../core/members/model.ts"

/** An answer in the error envelope (`{error: {code, message, requestId}}`), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null
  ) {
    super(message)
  }
}

export interface WorkspaceRef {
  readonly id: string
  readonly name: string
}

export interface Me {
  readonly member: Member
  readonly workspace: WorkspaceRef
  readonly workspaces: ReadonlyArray<WorkspaceRef & { readonly role: Role }>
}

/** A capability the signed-in member may call (`GET /v1/app/tools`). */
export interface ToolInfo {
  readonly name: string
  readonly title: string
  readonly scope: string
  readonly readOnly: boolean
  readonly destructive: boolean
}

/** Called when the server says the session is gone (401), so the app shows the sign-in screen. */
let onSignedOut: () => void = () => undefined
export const whenSignedOut = (f: () => void) => {
  onSignedOut = f
}

const request = async <A>(method: "GET" | "POST", path: string, body?: unknown): Promise<A> => {
  let res: Response
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { accept: "application/json" } : {
        accept: "application/json",
        "content-type": "application/json"
      },
      body: body === undefined ? null : JSON.stringify(body)
    })
  } catch {
    throw new ApiError(0, "network", "The server could not be reached. Check your connection and try again.", null)
  }
  const text = await res.text()
  let json: any = null
  try {
    json = text.length > 0 ? JSON.parse(text) : null
  } catch {
    // Not JSON (a proxy's error page): reported below by status.
  }
  if (res.ok) return json as A
  const error = json?.error
  if (res.status === 401 && path !== "/v1/app/me") onSignedOut()
  throw new ApiError(
    res.status,
    typeof error?.code === "string" ? error.code : "unknown",
    typeof error?.message === "string" ? error.message : `The server answered ${res.status}.`,
    typeof error?.requestId === "string" ? error.requestId : res.headers.get("x-request-id")
  )
}

/** Runs one capability as the signed-in member; its answer is what the REST route answers. */
export const tool = <A>(name: string, input: Record<string, unknown> = {}): Promise<A> =>
  request<A>("POST", `/v1/app/tools/${encodeURIComponent(name)}`, input)

export const api = {
  me: () => request<Me>("GET", "/v1/app/me"),
  signIn: (email: string) => request<{ sent: true }>("POST", "/v1/app/sign-in", { email }),
  signOut: () => request<{ signedOut: true }>("POST", "/v1/app/sign-out", {}),
  switchWorkspace: (workspaceId: string) => request<Me>("POST", "/v1/app/workspace", { workspaceId }),
  tools: () => request<{ tools: ReadonlyArray<ToolInfo> }>("GET", "/v1/app/tools")
}

/**
 * A 400's message split by field: the server says `business.ein: must be 9 digits; business.state:
 * ...` (core/kernel/decodeMessage.ts). `prefix` drops a leading path (`business.`); a part without a
 * known field goes under "".
 */
export const fieldErrors = (
  error: unknown,
  fields: ReadonlyArray<string>,
  prefix = ""
): Record<string, string> => {
  if (!(error instanceof ApiError) || error.status !== 400) return {}
  const out: Record<string, string> = {}
  for (const part of error.message.split("; ")) {
    const m = /^([\w.[\]]+): (.+)$/.exec(part)
    const path = m?.[1]?.startsWith(prefix) ? m[1].slice(prefix.length) : m?.[1]
    // `phones.0`: the field `phones`.
    const key = path === undefined ? "" : fields.find((f) => path === f || path.startsWith(`${f}.`)) ?? ""
    const text = m !== null && key !== "" ? m[2]! : part
    out[key] = out[key] === undefined ? text : `${out[key]}; ${text}`
  }
  return out
}

/** What a form shows beside its button: the failure, less what `fieldErrors` put under a field. */
export const formError = (error: unknown, byField: Record<string, string>): unknown =>
  Object.keys(byField).length === 0 ? error : byField[""]
