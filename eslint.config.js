import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // odlcoectl reads through the models, the adapters and the ODL reader, never through a
    // program's internals: what it shows must not depend on how the watcher or agent run.
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/agent/*', '**/watcher/*'],
              message:
                'odlcoectl does not import src/agent/ or src/watcher/; move what it needs to a shared module',
            },
          ],
        },
      ],
    },
  },
  {
    // The CNI shim runs on every pod start: node: built-ins only, nothing else.
    files: ['cni/**/*.ts'],
    ignores: ['cni/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['*', '!node:*'], message: 'the CNI shim imports only node: built-ins' }] },
      ],
    },
  },
);
