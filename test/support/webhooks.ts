/** Webhook endpoint records for the stores and workers under test. */
import type { EndpointRecord } from "../../core/webhooks/model.ts"
import { generateSecret } from "../../core/webhooks/signing.ts"

/** An enabled endpoint of `workspaceId`, subscribed to every event, with a fresh secret; `patch` sets any field. */
export const endpointRecord = (workspaceId: string, patch: Partial<EndpointRecord> = {}): EndpointRecord => ({
  id: crypto.randomUUID(),
  workspaceId,
  url: "https://hooks.example.com/a",
  events: ["*"],
  label: null,
  status: "enabled",
  apiVersion: null,
  createdAt: new Date().toISOString(),
  secret: generateSecret(),
  previousSecrets: [],
  failingSince: null,
  ...patch
})
