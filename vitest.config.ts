import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30000,
    hookTimeout: 60000,
    pool: "forks",
    // The JSON report lets .ci/run print a one-line summary (the Deno run, deno.json's vitest task, writes its own).
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-report.json" }
  }
})
