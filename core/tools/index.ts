/** The capability table: every tool the MCP endpoint lists and the agent may call. */
import * as Contacts from "./contacts.ts"
import * as Conversations from "./conversations.ts"
import type { AnyTool } from "./tool.ts"
import * as Webhooks from "./webhooks.ts"

export * from "./tool.ts"
export { Contacts, Conversations, Webhooks }

export const tools: ReadonlyArray<AnyTool> = [...Object.values(Contacts), ...Object.values(Conversations), ...Object.values(Webhooks)]
