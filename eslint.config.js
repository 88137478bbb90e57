import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import stylistic from '@stylistic/eslint-plugin'
import globals from 'globals'

/**
 * The house style: neostandard's stylistic rules (as the Fastify demo uses them), with line length 120, fitted to
 * the code's existing style where it differs: no space before a named function's parenthesis, several properties
 * on one line of a multi-line object, SQL in template literals, union members on leading `|`.
 */
const style = {
  '@stylistic/array-bracket-spacing': ['error', 'never'],
  '@stylistic/arrow-spacing': ['error', { before: true, after: true }],
  '@stylistic/block-spacing': ['error', 'always'],
  '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
  '@stylistic/comma-dangle': ['error', 'never'],
  '@stylistic/comma-spacing': ['error', { before: false, after: true }],
  '@stylistic/comma-style': ['error', 'last'],
  '@stylistic/computed-property-spacing': ['error', 'never'],
  '@stylistic/dot-location': ['error', 'property'],
  '@stylistic/eol-last': 'error',
  '@stylistic/function-call-spacing': ['error', 'never'],
  '@stylistic/generator-star-spacing': ['error', { before: false, after: true }],
  '@stylistic/indent': ['error', 2, {
    SwitchCase: 1, flatTernaryExpressions: false, ignoreComments: false, offsetTernaryExpressions: true
  }],
  '@stylistic/key-spacing': ['error', { beforeColon: false, afterColon: true }],
  '@stylistic/keyword-spacing': ['error', { before: true, after: true }],
  '@stylistic/lines-between-class-members': ['error', 'always', { exceptAfterSingleLine: true }],
  '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }],
  '@stylistic/new-parens': 'error',
  '@stylistic/no-extra-parens': ['error', 'functions'],
  '@stylistic/no-floating-decimal': 'error',
  '@stylistic/no-mixed-operators': ['error', {
    groups: [['==', '!=', '===', '!==', '>', '>=', '<', '<='], ['&&', '||'], ['in', 'instanceof']],
    allowSamePrecedence: true
  }],
  '@stylistic/no-mixed-spaces-and-tabs': 'error',
  '@stylistic/no-multi-spaces': 'error',
  '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxBOF: 0, maxEOF: 0 }],
  '@stylistic/no-tabs': 'error',
  '@stylistic/no-trailing-spaces': 'error',
  '@stylistic/no-whitespace-before-property': 'error',
  '@stylistic/object-curly-newline': ['error', { consistent: true }],
  '@stylistic/object-curly-spacing': ['error', 'always'],
  '@stylistic/operator-linebreak': ['error', 'after', {
    overrides: { '?': 'before', ':': 'before', '|>': 'before', '|': 'before', '&': 'before' }
  }],
  '@stylistic/padded-blocks': ['error', { blocks: 'never', switches: 'never', classes: 'never' }],
  '@stylistic/quote-props': ['error', 'as-needed'],
  '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
  '@stylistic/rest-spread-spacing': ['error', 'never'],
  '@stylistic/semi': ['error', 'never'],
  '@stylistic/semi-spacing': ['error', { before: false, after: true }],
  '@stylistic/space-before-blocks': ['error', 'always'],
  '@stylistic/space-before-function-paren': ['error', { anonymous: 'ignore', named: 'never', asyncArrow: 'always' }],
  '@stylistic/space-infix-ops': 'error',
  '@stylistic/space-unary-ops': ['error', { words: true, nonwords: false }],
  '@stylistic/spaced-comment': ['error', 'always', {
    line: { markers: ['*package', '!', '/', ',', '='] },
    block: { balanced: true, markers: ['*package', '!', ',', ':', '::', 'flow-include'], exceptions: ['*'] }
  }],
  '@stylistic/template-curly-spacing': ['error', 'never'],
  '@stylistic/template-tag-spacing': ['error', 'never'],
  '@stylistic/wrap-iife': ['error', 'any', { functionPrototypeMethods: true }],
  '@stylistic/yield-star-spacing': ['error', 'both'],
  '@stylistic/type-annotation-spacing': 'error'
}

export default tseslint.config(
  {
    ignores: ['dist/**', 'clients/*/dist/**', 'clients/typescript/src/generated/**', 'node_modules/**',
      'schema/migrations/**', 'data/**', '.tap/**']
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  {
    plugins: { '@stylistic': stylistic },
    rules: {
      ...style,
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }]
    }
  },
  {
    // the web console runs in browsers
    files: ['console/**/*.{ts,tsx}'],
    ignores: ['console/vite.config.ts'],
    languageOptions: { globals: globals.browser }
  },
  {
    files: ['bench/**', 'scripts/**'],
    rules: { 'no-console': 'off' }
  }
)
