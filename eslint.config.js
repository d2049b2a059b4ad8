// Lint: the recommended JS and TypeScript rules, without type-aware rules so `npm test` stays fast.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'out/', 'coverage/', 'src/cli/.launch.bundle.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', performance: 'readonly', setImmediate: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Only src/config reads process.env (see STYLE.md).',
        },
      ],
    },
  },
  {
    files: ['src/config/**', 'test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
