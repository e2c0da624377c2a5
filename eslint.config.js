import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The layers of src/ (docs/architecture.md): what each may import, enforced here. */
const layer = (files, forbidden) => ({
  files,
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      { patterns: forbidden.map(([group, message]) => ({ group, message })) },
    ],
  },
});
const noHttp = [
  ['fastify', '@fastify/*', '**/http/*', '**/routes/*'],
  'no HTTP below src/http and src/routes',
];
const noSql = [
  ['better-sqlite3', 'pg', '**/storage/sqlite/*', '**/storage/postgres/*'],
  'the store port only',
];
const noPipeline = [['**/domain/*', '**/domain/**'], 'the store knows records, not the pipeline'];
const noLayers = [
  ['**/domain/**', '**/storage/**', '**/http/**', '**/routes/**'],
  'model is the shared vocabulary',
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.mjs', '**/*.cjs', 'scripts/**'], languageOptions: { globals: globals.node } },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  layer(['src/model/**'], [noLayers, noHttp]),
  layer(['src/domain/**'], [noHttp, noSql]),
  layer(['src/storage/**'], [noHttp, noPipeline]),
  layer(['src/outbound/**'], [noHttp, noSql, noPipeline]),
);
