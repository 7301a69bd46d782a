import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';

/** Pinned: swapping with `rename` needs 1.18 or later. */
export const MEILI_IMAGE = 'getmeili/meilisearch:v1.18.0';
const MASTER_KEY = 'contract-suite-master-key';

export type MeiliServer = { url: string; apiKey?: string; stop(): Promise<void> } | { skipped: string };

/** `MEILI_URL` (with `MEILI_API_KEY`), or a throwaway server in a container where Docker runs, or why neither. */
export const reachableMeilisearch = async (): Promise<MeiliServer> => {
  if (process.env.MEILI_URL) {
    return { url: process.env.MEILI_URL, apiKey: process.env.MEILI_API_KEY, stop: () => Promise.resolve() };
  }
  let container: StartedTestContainer;
  try {
    container = await new GenericContainer(MEILI_IMAGE)
      .withEnvironment({ MEILI_MASTER_KEY: MASTER_KEY, MEILI_NO_ANALYTICS: 'true' })
      .withExposedPorts(7700)
      .withWaitStrategy(Wait.forHttp('/health', 7700))
      .withStartupTimeout(120_000)
      .start();
  } catch (error) {
    return {
      skipped: `MEILI_URL is not set and no container could start (${(error as Error).message.split('\n')[0]})`,
    };
  }
  let stopping: Promise<unknown> | undefined;
  return {
    url: `http://${container.getHost()}:${container.getMappedPort(7700)}`,
    apiKey: MASTER_KEY,
    stop: async () => {
      stopping ??= container.stop();
      await stopping;
    },
  };
};
