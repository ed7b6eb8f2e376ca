/**
 * Vitest global setup of the e2e project: picks the backend (E2E_BACKEND=processes|containers) and,
 * for containers, checks once that a Docker engine is reachable and the images are there (building
 * the samsa image from docker/Dockerfile, or pulling ZooKeeper, when missing). Tests read the result
 * with inject('e2eBackend'); `skip` is why the backend cannot run (suites are then skipped).
 */
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { sweepStaleNetns } from './netns-registry.js';

export interface E2EBackend {
  name: 'processes' | 'containers';
  skip: string | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    e2eBackend: E2EBackend;
  }
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref())]);
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/** Why containers cannot run here, or null when they can. */
async function containersUnavailable(): Promise<string | null> {
  const { GenericContainer, ImageName, getContainerRuntimeClient } = await import('testcontainers');
  const { SAMSA_IMAGE, ZOOKEEPER_IMAGE } = await import('./containers.js');
  let client;
  try {
    client = await withTimeout(getContainerRuntimeClient(), 20_000, 'Docker engine');
  } catch (err) {
    return `no Docker engine reachable (${message(err)}); set DOCKER_HOST or run scripts/docker-local.sh e2e`;
  }
  if (!(await client.image.exists(ImageName.fromString(SAMSA_IMAGE)))) {
    process.stderr.write(`[e2e] image ${SAMSA_IMAGE} not found: building it from docker/Dockerfile\n`);
    try {
      const nodeImage = process.env['SAMSA_E2E_NODE_IMAGE'];
      const build = GenericContainer.fromDockerfile(ROOT, 'docker/Dockerfile');
      if (nodeImage) build.withBuildArgs({ BASE_IMAGE: nodeImage });
      await build.build(SAMSA_IMAGE, { deleteOnExit: false });
    } catch (err) {
      return `could not build ${SAMSA_IMAGE} (${message(err)}); build it with docker build -f docker/Dockerfile -t ${SAMSA_IMAGE} .`;
    }
  }
  if (!(await client.image.exists(ImageName.fromString(ZOOKEEPER_IMAGE)))) {
    try {
      await client.image.pull(ImageName.fromString(ZOOKEEPER_IMAGE));
    } catch (err) {
      return `ZooKeeper image ${ZOOKEEPER_IMAGE} not available (${message(err)}); set SAMSA_E2E_ZOOKEEPER_IMAGE`;
    }
  }
  return null;
}

export default async function setup(project: TestProject): Promise<() => void> {
  const name = process.env['E2E_BACKEND'] ?? 'processes';
  if (name !== 'processes' && name !== 'containers') throw new Error(`E2E_BACKEND=${name}: expected processes or containers`);
  const skip = name === 'containers' ? await containersUnavailable() : null;
  // scripts/docker-local.sh e2e started an engine: not reaching it is a failure, not a skip
  if (skip !== null && process.env['SAMSA_E2E_REQUIRE_BACKEND'] === '1') throw new Error(`E2E_BACKEND=containers cannot run: ${skip}`);
  if (skip !== null) process.stderr.write(`[e2e] E2E_BACKEND=containers: every suite is skipped: ${skip}\n`);
  project.provide('e2eBackend', { name, skip });
  // network-namespace suites (test-e2e/netns.ts) delete their namespaces themselves; this catches
  // what a crashed worker left behind
  return () => {
    const n = sweepStaleNetns(process.pid);
    if (n > 0) process.stderr.write(`[e2e] deleted the network namespaces of ${n} run(s) left behind\n`);
  };
}
