// Lint and format, as Effect's own templates set them up: typescript-eslint's recommended rules,
// and dprint's TypeScript formatter run as the `@effect/dprint` rule (`npm run lint`, `npm run format`).
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/**", "scratch/**", "dist/**", ".data/**", "apps/bench/results/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx,mts,cts,js,mjs,cjs}"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    plugins: { "@effect": effectEslint },
    rules: {
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            lineWidth: 120,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force"
          }
        }
      ],
      // The table's entries, Schema generics and library seams legitimately take `any`.
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrors: "none",
        ignoreRestSiblings: true
      }],
      // Namespaces merged with a type (`Tag.of`) are Effect's idiom.
      "@typescript-eslint/no-namespace": "off",
      // Data.TaggedEnum writes a case without fields as `{}`.
      "@typescript-eslint/no-empty-object-type": ["error", { allowObjectTypes: "always" }],
      // Deno's checker cannot resolve some packages' subpath exports that tsc checks (adapters/mcp/server.ts).
      "@typescript-eslint/ban-ts-comment": ["error", { "ts-ignore": "allow-with-description" }],
      // The input rules match NUL and other control characters on purpose, to refuse them.
      "no-control-regex": "off",
      "no-new-func": "error",
      "prefer-rest-params": "error"
    }
  },
  {
    files: ["**/*.{js,mjs,cjs}"],
    languageOptions: {
      globals: {
        require: "readonly",
        module: "writable",
        process: "readonly",
        console: "readonly",
        __dirname: "readonly"
      }
    },
    rules: { "@typescript-eslint/no-require-imports": "off" }
  }
)
