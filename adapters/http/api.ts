/**
 * The HTTP contract: one HttpApi definition gives routing, decoding, the OpenAPI document and the
 * typed client (client.ts). One group per feature under api/; a capability's handler is derived from its tool (capabilities.ts), the rest are in handlers/*.ts; the platform
 * middleware (envelope, request id, limits) in platform.ts.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AdminGroup } from "./api/admin.ts"
import { AgentGroup } from "./api/agent.ts"
import { AppGroup } from "./api/app.ts"
import { CallsGroup } from "./api/calls.ts"
import { CarrierGroup } from "./api/carrier.ts"
import { ContactsGroup } from "./api/contacts.ts"
import { ConversationsGroup } from "./api/conversations.ts"
import { Internal } from "./api/errors.ts"
import { HealthGroup } from "./api/health.ts"
import { McpGroup, McpStreamGroup } from "./api/mcp.ts"
import { MediaGroup } from "./api/media.ts"
import { MessagesGroup } from "./api/messages.ts"
import { MetricsGroup } from "./api/metrics.ts"
import { NumbersGroup } from "./api/numbers.ts"
import { OptOutsGroup } from "./api/optOuts.ts"
import { PaymentsGroup } from "./api/payments.ts"
import { ReferenceGroup } from "./api/reference.ts"
import { MessagingGroup } from "./api/registration.ts"
import { SchedulingGroup } from "./api/scheduling.ts"
import { TestHelpersGroup } from "./api/testHelpers.ts"
import { WebhooksGroup } from "./api/webhooks.ts"
import { ConsoleGroup } from "./console.ts"
import { patchOpenApi } from "./openapi.ts"

export const API_VERSION = "2026-08-17"

export class Api extends HttpApi.make("switchboard")
  .add(ContactsGroup)
  .add(OptOutsGroup)
  .add(ConversationsGroup)
  .add(MessagesGroup)
  .add(SchedulingGroup)
  .add(CallsGroup)
  .add(NumbersGroup)
  .add(MessagingGroup)
  .add(AgentGroup)
  .add(WebhooksGroup)
  .add(TestHelpersGroup)
  .add(McpGroup)
  .add(McpStreamGroup)
  .add(MediaGroup)
  .add(CarrierGroup)
  .add(PaymentsGroup)
  .add(AdminGroup)
  .add(AppGroup)
  .add(MetricsGroup)
  .add(HealthGroup)
  .add(ReferenceGroup)
  .add(ConsoleGroup)
  .addError(Internal)
  .annotate(OpenApi.Title, "Switchboard API")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(
    OpenApi.Description,
    "Messaging and telephony for business workspaces.\n\n" +
      "On the Node server (`npm start`), some requests are refused before they reach any operation, with the same error envelope (`code` `invalid_argument`) and `X-Request-Id`, and the connection closed: " +
      "a malformed request line or header, or an HTTP/1.1 request without `Host` (`400`), `CONNECT` (`405`), a request line and headers over 16 KB (`431`), a request not received in time (`408`; by default headers within 15 s, the whole request within 30 s)."
  )
  .annotate(OpenApi.Transform, patchOpenApi)
{}
