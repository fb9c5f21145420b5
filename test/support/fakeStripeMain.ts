/**
 * The fake Stripe (fakeStripe.ts) as a process of its own, for a test that runs the server as one:
 * `npx tsx test/support/fakeStripeMain.ts`. Reads FAKE_STRIPE_PORT (default: a free port),
 * STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and FAKE_STRIPE_WEBHOOK_URL (where events are sent);
 * prints one line `fake stripe listening {"port":...,"url":...}`, and stops on SIGTERM. A test
 * completes a Checkout Session with `POST /_fake/checkout/sessions/{id}/complete` (`card=pm_card_visa`).
 */
import { startFakeStripe } from "./fakeStripe.ts"

const env = process.env
const fake = await startFakeStripe({
  ...(env["STRIPE_SECRET_KEY"] ? { secretKeys: [env["STRIPE_SECRET_KEY"]] } : {}),
  ...(env["STRIPE_WEBHOOK_SECRET"] ? { webhookSecret: env["STRIPE_WEBHOOK_SECRET"] } : {}),
  ...(env["FAKE_STRIPE_PORT"] ? { port: Number(env["FAKE_STRIPE_PORT"]) } : {})
})
fake.setWebhookUrl(env["FAKE_STRIPE_WEBHOOK_URL"] ?? null)
process.stdout.write(`fake stripe listening ${JSON.stringify({ port: fake.port, url: fake.url })}\n`)
process.once("SIGTERM", () => void fake.close().then(() => process.exit(0)))
