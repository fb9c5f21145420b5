/** The route templates request metrics and the access log are labelled with (adapters/http/accessLog.ts `routeMatcher`). */
import { expect, it } from "vitest"
import { routeMatcher } from "../../adapters/http/accessLog.ts"
import { Api } from "../../adapters/http/api.ts"

it("names the route template a path takes: static segments before parameters, HEAD as GET, query ignored, unknown paths unmatched", () => {
  const match = routeMatcher(Api)
  expect(match("GET", "/v1/api/messages/search?q=ada")).toBe("/v1/api/messages/search")
  expect(match("GET", "/v1/api/contacts/0b7c")).toBe("/v1/api/contacts/:id")
  expect(match("HEAD", "/v1/api/contacts")).toBe("/v1/api/contacts")
  expect(match("DELETE", "/v1/api/contacts/0b7c")).toBe("/v1/api/contacts/:id")
  expect(match("GET", "/v1/api/contacts/0b7c/extra")).toBeUndefined()
  expect(match("POST", "/v1/api/contacts/0b7c")).toBeUndefined()
})
