import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30000,
    hookTimeout: 60000,
    pool: "forks",
    // The JSON report lets .ci/run print a one-line summary.
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-report.json" }
  }
})
