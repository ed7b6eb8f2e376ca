import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const pkgs = [
  'protocol',
  'zk-paths',
  'server-common',
  'storage',
  'group-coordinator',
  'transaction-coordinator',
  'local-cluster',
  'controller',
  'broker',
  'client',
  'console',
  'cli',
];
const src = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));
// Tests run against TypeScript sources; packages resolve to their src/ entry points, subpath exports
// (`@samsa/client/testing`, `@samsa/client/verify`, `@samsa/storage/testing`, `@samsa/group-coordinator/testing`, `@samsa/server-common/testing`)
// to their modules.
const alias = [
  { find: /^@samsa\/client\/(testing|verify)$/, replacement: src('client/src/$1/index.ts') },
  { find: /^@samsa\/storage\/testing$/, replacement: src('storage/src/testing/index.ts') },
  { find: /^@samsa\/group-coordinator\/testing$/, replacement: src('group-coordinator/src/test-support.ts') },
  { find: /^@samsa\/server-common\/testing$/, replacement: src('server-common/src/testing/index.ts') },
  ...pkgs.map((p) => ({ find: new RegExp(`^@samsa/${p}$`), replacement: src(`${p}/src/index.ts`) })),
];

/**
 * E2E files that measure rates or times (quota rates, reassignment throttles, producer throughput
 * beside kcat, how fast the console shows a leader move) or load the box (the rolling restart at
 * 1,000 partitions): they run one at a time, alone on the box.
 */
const E2E_SERIAL = [
  'test-e2e/quotas.test.ts',
  'test-e2e/reassignment.test.ts',
  'test-e2e/producer.test.ts',
  'test-e2e/console.test.ts',
  'test-e2e/rolling-restart-scale.test.ts',
];

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'scripts/**/*.test.mjs'],
          exclude: ['packages/*/src/**/*.int.test.ts', '**/node_modules/**', '**/dist/**'],
          testTimeout: 20_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          globalSetup: ['packages/local-cluster/src/vitest-global-setup.ts'],
          include: ['packages/*/src/**/*.int.test.ts', 'packages/*/test/**/*.int.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Each integration file starts its own ZooKeeper ensemble / brokers; keep the 2-core box calm.
          fileParallelism: false,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'e2e',
          globalSetup: ['packages/local-cluster/src/vitest-global-setup.ts', 'test-e2e/global-setup.ts'],
          include: ['test-e2e/**/*.test.ts'],
          exclude: ['test-e2e/chaos/**', ...E2E_SERIAL, '**/node_modules/**'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          // two files at a time: most of an e2e file's time is waiting (session timeouts, elections,
          // rebalances), and every file starts its own ZooKeeper and brokers on random ports
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'e2e-serial',
          globalSetup: ['packages/local-cluster/src/vitest-global-setup.ts', 'test-e2e/global-setup.ts'],
          include: E2E_SERIAL,
          testTimeout: 300_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'chaos',
          globalSetup: ['packages/local-cluster/src/vitest-global-setup.ts', 'test-e2e/global-setup.ts'],
          include: ['test-e2e/chaos/**/*.test.ts'],
          testTimeout: 900_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
