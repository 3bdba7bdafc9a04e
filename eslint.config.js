import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/** Tenancy by construction (docs/architecture/tenancy.md): the account's condition, once added, stays. */
const KEEP_ACCOUNT = { selector: "CallExpression[callee.property.name='clearWhere']", message: 'clearWhere would drop the account condition that forAccount adds: build the query again instead.' }

const DIALECT_MESSAGE =
  'Dialect differences live in src/platform/storage (SqlDialect) and in the `sql/` folders: use the dialect object, or add to an aggregate\'s `sql/` interface.'

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'eqeqeq': ['error', 'smart'],
      'no-console': 'off',
    },
  },
  // Dialects in their own modules (docs/architecture/layout.md): outside the storage layer and the `sql/` folders,
  // code never asks which database it is on. It calls the SqlDialect's methods, or its aggregate's SQL chosen once in
  // a `sql/index.ts`.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/platform/storage/**', 'src/**/sql/**'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          { name: 'kysely', importNames: ['PostgresAdapter', 'SqliteAdapter', 'PostgresDialect', 'SqliteDialect'], message: DIALECT_MESSAGE },
          { name: 'pg', message: DIALECT_MESSAGE },
          { name: 'better-sqlite3', message: DIALECT_MESSAGE },
        ],
        patterns: [{ group: ['**/dialects/postgres*', '**/dialects/sqlite*', '**/sql/postgres*', '**/sql/sqlite*'], message: DIALECT_MESSAGE }],
      }],
      'no-restricted-syntax': ['error',
        { selector: "MemberExpression[property.name='name'][object.name=/dialect/i]", message: DIALECT_MESSAGE },
        { selector: "MemberExpression[property.name='name'][object.property.name=/dialect/i]", message: DIALECT_MESSAGE },
        { selector: "MemberExpression[property.name='postgres'][object.name=/database/i]", message: DIALECT_MESSAGE },
        { selector: "MemberExpression[property.name='postgres'][object.property.name=/database/i]", message: DIALECT_MESSAGE },
        { selector: "Identifier[name='DialectFeatures']", message: DIALECT_MESSAGE },
        KEEP_ACCOUNT,
      ],
    },
  },
  { files: ['src/platform/storage/**/*.ts', 'src/**/sql/**/*.ts'], rules: { 'no-restricted-syntax': ['error', KEEP_ACCOUNT] } },
  // The console runs in the browser (its Vite config in Node).
  { files: ['console/src/**/*.{ts,tsx}'], languageOptions: { globals: globals.browser } },
  // The benchmarks, the examples and the scripts are plain Node.js scripts.
  { files: ['bench/**/*.mjs', 'examples/**/*.mjs', 'scripts/**/*.mjs'], languageOptions: { globals: globals.node } },
)
