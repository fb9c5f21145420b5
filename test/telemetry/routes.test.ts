/** The route templates request metrics are labelled with (adapters/telemetry/http.ts). */
import { expect, it } from "vitest"
import { routeMatcher, UNMATCHED } from "../../adapters/telemetry/http.ts"

it("names the route template a path takes: static segments before parameters, HEAD as GET, query ignored, unknown paths unmatched", () => {
  const match = routeMatcher([
    { method: "GET", path: "/v1/api/contacts/:id" },
    { method: "GET", path: "/v1/api/contacts/search" },
    { method: "GET", path: "/v1/api/contacts" },
    { method: "DELETE", path: "/v1/api/contacts/:id" }
  ])
  expect(match("GET", "/v1/api/contacts/search?q=ada")).toBe("/v1/api/contacts/search")
  expect(match("GET", "/v1/api/contacts/0b7c")).toBe("/v1/api/contacts/:id")
  expect(match("HEAD", "/v1/api/contacts")).toBe("/v1/api/contacts")
  expect(match("DELETE", "/v1/api/contacts/0b7c")).toBe("/v1/api/contacts/:id")
  expect(match("GET", "/v1/api/contacts/")).toBe(UNMATCHED)
  expect(match("GET", "/v1/api/contacts/0b7c/extra")).toBe(UNMATCHED)
  expect(match("POST", "/v1/api/contacts/0b7c")).toBe(UNMATCHED)
})
